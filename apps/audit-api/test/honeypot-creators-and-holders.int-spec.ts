import { FakeClock, startAnvil, type AnvilInstance } from '@meridian/testing';
import {
  createWalletClient,
  encodeFunctionData,
  getAddress,
  http,
  parseAbi,
  parseEther,
  toHex,
  zeroAddress,
  type Address,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { DataSource } from 'typeorm';
import {
  rugPullResponseSchema,
  walletAuditResponseSchema,
  walletCheckResponseSchema,
} from '../src/wallet/audit-response.schemas';
import { startAuditApp, type AuditTestApp } from './support/audit-app';
import { fixture, setUpDevnet, SUPPLY, type Devnet } from './support/devnet';
import { InTestCredentialSource } from './support/in-test-credentials';

const KEY = 'honeypot-links-key';
/** anvil's default accounts 1–4 (public test mnemonic); account 0 is the devnet's deployer. */
const ACCOUNT_KEYS = [
  '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
  '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a',
  '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6',
  '0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a',
] as const satisfies readonly Hex[];
/** Whom the creator makes the honeypot's owner: anyone it likes, e.g. a stranger's wallet. */
const NAMED_OWNER = '0x000000000000000000000000000000000000a11c' as Address;
const OWNABLE_ABI = parseAbi([
  'function setMarket(address)',
  'function transferOwnership(address)',
]);

type NoPoolToken = 'OwnerOnlyTransferToken' | 'LaunchLockedToken' | 'CleanToken';

/**
 * Two gaps a QA tester found (docs/adr/0302 and 0303, amendments of 2026-11-29):
 * 1. the creator of a token the rug pull checker calls a honeypot is `honeypot_related_address`
 *    in wallet risk and wallet audit, at once, also when the creator was checked (and its
 *    verdict cached) before the token; the owner the token names is not;
 * 2. without a pool, a token whose holders cannot pass tokens on is no Low Risk / is_honeypot 0,
 *    and a sale nobody could try is unknown (null), not 0.
 */
describe('honeypot creators and holders who cannot transfer (anvil + Uniswap V2)', () => {
  let anvil: AnvilInstance;
  let devnet: Devnet;
  let audit: AuditTestApp;
  let honeypot: Address;
  const noPool = {} as Record<NoPoolToken, Address>;
  const clock = new FakeClock(new Date());
  let deployFrom: (key: Hex, name: NoPoolToken) => Promise<Address>;

  beforeAll(async () => {
    anvil = await startAnvil({ chainId: 1 });
    devnet = await setUpDevnet(anvil.url);
    const chain = {
      id: 1,
      name: 'anvil',
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [anvil.url] } },
    };
    // Each no-pool token has its own creator, so one's verdict cannot colour another's.
    deployFrom = async (key: Hex, name: NoPoolToken) => {
      const account = privateKeyToAccount(key);
      const wallet = createWalletClient({ account, chain, transport: http(anvil.url) });
      const hash = await wallet.deployContract({
        abi: fixture(name).abi,
        bytecode: fixture(name).bytecode,
        args: [SUPPLY],
      });
      const receipt = await devnet.publicClient.waitForTransactionReceipt({
        hash,
        pollingInterval: 50,
      });
      return receipt.contractAddress!;
    };
    noPool.OwnerOnlyTransferToken = await deployFrom(ACCOUNT_KEYS[0], 'OwnerOnlyTransferToken');
    noPool.LaunchLockedToken = await deployFrom(ACCOUNT_KEYS[1], 'LaunchLockedToken');
    noPool.CleanToken = await deployFrom(ACCOUNT_KEYS[2], 'CleanToken');
    // The tester's QaSellTrap: deployed from account 0, a Uniswap V2 pool, buys work, sales revert.
    honeypot = await devnet.deploy(
      fixture('HoneypotToken').abi,
      fixture('HoneypotToken').bytecode,
      [SUPPLY],
    );
    const pair = await devnet.addLiquidity(honeypot, SUPPLY / 2n, parseEther('10'));
    await devnet.send(honeypot, OWNABLE_ABI, 'setMarket', [pair]);
    await devnet.send(honeypot, OWNABLE_ABI, 'transferOwnership', [NAMED_OWNER]);
    audit = await startAuditApp(
      {
        AUDIT_RPC_URLS: JSON.stringify({ ETH: anvil.url }),
        AUDIT_DEX_ROUTERS: JSON.stringify({ ETH: [devnet.uniswap.router] }),
        // The default reuse TTL: a creator checked before its token keeps a cached verdict.
        AUDIT_VERDICT_TTL_MS: '600000',
      },
      {
        clock,
        credentials: new InTestCredentialSource().add(KEY, {
          planId: 'enterprise',
          auditQuota: { checksPerDay: 1e6, requestsPerSecond: 1e6 },
        }),
      },
    );
  }, 240_000);

  afterAll(async () => {
    await audit?.close();
    await anvil?.stop();
  });

  const rugPull = async (address: Address) => {
    clock.advance(1_000);
    const response = await audit.post(
      '/v1/rug-pull/check',
      { network: 'ETH', contract_address: address },
      KEY,
    );
    if (response.status !== 200) throw new Error(JSON.stringify(response.body));
    return rugPullResponseSchema.parse(response.body).data;
  };
  const walletCheck = async (address: Address) => {
    clock.advance(1_000);
    const response = await audit.post('/v1/wallet-audit/check', { network: 'ETH', address }, KEY);
    if (response.status !== 200) throw new Error(JSON.stringify(response.body));
    return walletCheckResponseSchema.parse(response.body).data;
  };
  const walletAudit = async (address: Address) => {
    clock.advance(1_000);
    const response = await audit.post('/v1/wallet-audit/audit', { network: 'ETH', address }, KEY);
    if (response.status !== 200) throw new Error(JSON.stringify(response.body));
    return walletAuditResponseSchema.parse(response.body).data;
  };

  describe('without a pool: the holders given tokens say what a sale cannot', () => {
    it('QaHoneypot (only the owner moves tokens): is_honeypot, High Risk, Fraud', async () => {
      const data = await rugPull(noPool.OwnerOnlyTransferToken);
      expect(data.risk_indicators).toMatchObject({
        has_liquidity_pool: 0,
        is_honeypot: 1,
        cannot_sell_all: 0,
        cannot_buy: null,
        buy_tax: null,
        sell_tax: null,
        transfer_pausable: 0,
      });
      // A proven honeypot is the full score (ADR 0304, amendment of QA M2).
      expect([data.risk_score, data.risk_status, data.status]).toEqual([100, 'High Risk', 'Fraud']);
    });

    it('a launch lock one owner call lifts: a restriction and a pause power, Medium, Not Fraud', async () => {
      const data = await rugPull(noPool.LaunchLockedToken);
      expect(data.risk_indicators).toMatchObject({
        has_liquidity_pool: 0,
        is_honeypot: 0,
        cannot_sell_all: 1,
        cannot_buy: null,
        transfer_pausable: 1,
      });
      expect([data.risk_score, data.risk_status, data.status]).toEqual([
        40,
        'Medium Risk',
        'Not Fraud',
      ]);
    });

    it('a token holders pass on freely: a sale nobody could try is unknown (null), Low Risk', async () => {
      const data = await rugPull(noPool.CleanToken);
      expect(data.risk_indicators).toMatchObject({
        has_liquidity_pool: 0,
        is_honeypot: null,
        cannot_sell_all: null,
        cannot_buy: null,
        buy_tax: null,
        sell_tax: null,
        transfer_tax: null,
      });
      expect([data.risk_score, data.risk_status, data.status]).toEqual([
        0,
        'Low Risk',
        'Not Fraud',
      ]);
    });

    it("the QaHoneypot's creator is honeypot_related_address; the clean token's is not", async () => {
      const trapper = await walletCheck(privateKeyToAccount(ACCOUNT_KEYS[0]).address);
      expect(trapper.forensic_details['honeypot_related_address']).toBe('1');
      expect([trapper.status, trapper.probabilityFraud]).toEqual(['Fraud', '1.0000000000']);
      const clean = await walletCheck(privateKeyToAccount(ACCOUNT_KEYS[2]).address);
      expect(clean.forensic_details['honeypot_related_address']).toBe('0');
      expect(clean.status).toBe('Not Fraud');
    });
  });

  describe("a honeypot's creator in wallet risk and wallet audit", () => {
    it('the creator checked before its token: not flagged, the verdict cached', async () => {
      const data = await walletCheck(devnet.deployer);
      expect(data.forensic_details['honeypot_related_address']).toBe('0');
      expect(data.status).toBe('Not Fraud');
    });

    it('the token checked: a honeypot (Fraud), its creator named', async () => {
      const data = await rugPull(honeypot);
      // Armed, and the owner it names can still switch the trap off and on (QA M2).
      expect(data.risk_indicators).toMatchObject({
        is_honeypot: 1,
        has_liquidity_pool: 1,
        owner_can_block_sells: 1,
        hidden_power: 1,
      });
      expect([data.risk_score, data.status]).toEqual([100, 'Fraud']);
      expect(data.contractCreatorAddress).toBe(getAddress(devnet.deployer));
    });

    it('the creator checked again within the reuse TTL: honeypot_related_address at once, Fraud 1.0', async () => {
      const check = await walletCheck(devnet.deployer);
      expect(check.forensic_details['honeypot_related_address']).toBe('1');
      expect(check.forensic_details['data_source']).toBe('rug-pull-checker');
      // The spec's counter counts it (QA L5: it read "0" beside honeypot_related_address "1").
      expect(check.forensic_details['number_of_malicious_contracts_created']).toBe('1');
      expect([check.status, check.probabilityFraud]).toEqual(['Fraud', '1.0000000000']);
      const profile = await walletAudit(devnet.deployer);
      expect(profile.forensic_details['honeypot_related_address']).toBe('1');
      expect(profile.categories).toContain('honeypot_related_address');
      expect([profile.status, profile.riskProfile]).toEqual(['Fraud', 'High']);
      expect(profile.recommendation).toBe(
        'Avoid: the address created a token the rug pull checker found to be a honeypot.',
      );
    });

    it("the creator's next token: Fraud through its creator, and the answer says why", async () => {
      const next = await devnet.deploy(fixture('CleanToken').abi, fixture('CleanToken').bytecode, [
        SUPPLY,
      ]);
      const data = await rugPull(next);
      expect(data.risk_indicators.honeypot_with_same_creator).toBe(1);
      // Score and risk status agree with the status (QA: it read 0, Low Risk, Fraud 1.0).
      expect([data.risk_score, data.risk_status]).toEqual([100, 'High Risk']);
      expect([data.status, data.probabilityFraud]).toEqual(['Fraud', '1.0000000000']);
      // The honeypot itself ranks no lower than its creator's clean token (QA M2: 80 below 100).
      const trap = await rugPull(honeypot);
      expect(trap.risk_score).toBeGreaterThanOrEqual(data.risk_score);
    });

    it('the owner the token names (the scammer can name anyone) is not flagged', async () => {
      const data = await walletCheck(NAMED_OWNER);
      expect(data.forensic_details['honeypot_related_address']).toBe('0');
      expect(data.status).not.toBe('Fraud');
    });

    it("the token checked again after the TTL keeps its own verdict, not its creator's echo", async () => {
      clock.advance(600_001);
      const data = await rugPull(honeypot);
      expect([data.risk_score, data.status]).toEqual([100, 'Fraud']);
      // Its own stored verdict is left out of its creator's link.
      expect(data.risk_indicators.honeypot_with_same_creator).toBe(0);
    });
  });

  describe("a creator's tokens agree as soon as one is found a honeypot (QA F1)", () => {
    it('a token cached Not Fraud before its sibling honeypot was found turns Fraud at once', async () => {
      // Account 4 has created nothing yet: its first token is judged on its own code.
      const first = await deployFrom(ACCOUNT_KEYS[3], 'CleanToken');
      const before = await rugPull(first);
      expect(before.risk_indicators.honeypot_with_same_creator).toBe(0);
      expect(before.status).toBe('Not Fraud');
      const trap = await deployFrom(ACCOUNT_KEYS[3], 'OwnerOnlyTransferToken');
      const found = await rugPull(trap);
      expect([found.risk_indicators.is_honeypot, found.status]).toEqual([1, 'Fraud']);
      // Inside the reuse TTL (a second later): not the verdict cached before the honeypot.
      const again = await rugPull(first);
      expect(again.risk_indicators.honeypot_with_same_creator).toBe(1);
      expect([again.status, again.probabilityFraud]).toEqual(['Fraud', '1.0000000000']);
      // A twin deployed now gets the same answer as the first.
      const twin = await deployFrom(ACCOUNT_KEYS[3], 'CleanToken');
      const fresh = await rugPull(twin);
      expect(fresh.risk_indicators.honeypot_with_same_creator).toBe(1);
      expect([fresh.status, fresh.risk_status]).toEqual([again.status, again.risk_status]);
      // Checked again with nothing changed, the first is reused from the cache, still Fraud.
      const reused = await rugPull(first);
      expect([reused.status, reused.risk_indicators.honeypot_with_same_creator]).toEqual([
        'Fraud',
        1,
      ]);
      // A second honeypot of the creator: the spec's counter counts both (QA L5: it read "0").
      const secondTrap = await deployFrom(ACCOUNT_KEYS[3], 'OwnerOnlyTransferToken');
      expect((await rugPull(secondTrap)).risk_indicators.is_honeypot).toBe(1);
      const creator = await walletCheck(privateKeyToAccount(ACCOUNT_KEYS[3]).address);
      expect([
        creator.forensic_details['honeypot_related_address'],
        creator.forensic_details['number_of_malicious_contracts_created'],
      ]).toEqual(['1', '2']);
    });
  });

  describe('with AUDIT_VERDICT_TTL_MS=0 (no verdict kept): the link is kept all the same', () => {
    let uncached: AuditTestApp;

    beforeAll(async () => {
      uncached = await startAuditApp(
        {
          AUDIT_RPC_URLS: JSON.stringify({ ETH: anvil.url }),
          AUDIT_DEX_ROUTERS: JSON.stringify({ ETH: [devnet.uniswap.router] }),
          AUDIT_VERDICT_TTL_MS: '0',
        },
        {
          clock,
          credentials: new InTestCredentialSource().add(KEY, {
            planId: 'enterprise',
            auditQuota: { checksPerDay: 1e6, requestsPerSecond: 1e6 },
          }),
        },
      );
    }, 120_000);

    afterAll(async () => {
      await uncached?.close();
    });

    const post = async (path: string, body: Record<string, string>) => {
      clock.advance(1_000);
      const response = await uncached.post(path, body, KEY);
      if (response.status !== 200) throw new Error(JSON.stringify(response.body));
      return response.body;
    };
    const creatorFlag = async () =>
      walletCheckResponseSchema.parse(
        await post('/v1/wallet-audit/check', { network: 'ETH', address: devnet.deployer }),
      ).data.forensic_details['honeypot_related_address'];
    const tokenCheck = async (address: Address) =>
      rugPullResponseSchema.parse(
        await post('/v1/rug-pull/check', { network: 'ETH', contract_address: address }),
      ).data;

    it('the honeypot checked: its creator is honeypot_related_address, its next token Fraud', async () => {
      expect(await creatorFlag()).toBe('0');
      expect((await tokenCheck(honeypot)).risk_indicators.is_honeypot).toBe(1);
      const rows: unknown = await uncached.app
        .get(DataSource)
        .query('SELECT token, creator FROM audit.honeypot_tokens');
      expect(rows).toEqual([
        { token: honeypot.toLowerCase(), creator: devnet.deployer.toLowerCase() },
      ]);
      expect(await creatorFlag()).toBe('1');
      const next = await devnet.deploy(fixture('CleanToken').abi, fixture('CleanToken').bytecode, [
        SUPPLY,
      ]);
      const data = await tokenCheck(next);
      expect(data.risk_indicators.honeypot_with_same_creator).toBe(1);
      expect(data.status).toBe('Fraud');
    });

    it('the honeypot checked again once sales work: the link is gone', async () => {
      // The owner it names points the sale trap at no pair (an impersonated account on anvil).
      const request = (method: string, params: unknown[]) =>
        devnet.publicClient.request({ method: method as never, params: params as never });
      await request('anvil_setBalance', [NAMED_OWNER, toHex(parseEther('1'))]);
      await request('anvil_impersonateAccount', [NAMED_OWNER]);
      const hash = (await request('eth_sendTransaction', [
        {
          from: NAMED_OWNER,
          to: honeypot,
          data: encodeFunctionData({
            abi: OWNABLE_ABI,
            functionName: 'setMarket',
            args: [zeroAddress],
          }),
        },
      ])) as Hex;
      const receipt = await devnet.publicClient.waitForTransactionReceipt({
        hash,
        pollingInterval: 50,
      });
      expect(receipt.status).toBe('success');
      expect((await tokenCheck(honeypot)).risk_indicators.is_honeypot).toBe(0);
      expect(await creatorFlag()).toBe('0');
    });
  });

  describe('a sale trap armed with the pair after a check (QA: Not Fraud for 10 minutes)', () => {
    it('the unarmed switch is found by calling it with the pair; armed, the next check says so', async () => {
      const token = await devnet.deploy(
        fixture('HoneypotToken').abi,
        fixture('HoneypotToken').bytecode,
        [SUPPLY],
      );
      const pair = await devnet.addLiquidity(token, SUPPLY / 2n, parseEther('10'));
      // setMarket not called: sales work today; the owner's setMarket(pair) makes them revert.
      expect((await walletCheck(token)).forensic_details['honeypot_related_address']).toBe('0');
      const before = await rugPull(token);
      expect(before.risk_indicators).toMatchObject({
        is_honeypot: 0,
        sell_tax: 0,
        owner_can_block_sells: 1,
        hidden_power: 1,
      });
      expect([before.risk_status, before.status]).toEqual(['High Risk', 'Fraud']);
      await devnet.send(token, OWNABLE_ABI, 'setMarket', [pair]);
      // At once (the clock moved a second): not the verdict cached a second ago.
      const armed = await rugPull(token);
      expect(armed.risk_indicators.is_honeypot).toBe(1);
      expect(armed.status).toBe('Fraud');
      // Live, the trap scores no lower and shows no fewer powers than dormant (QA M2: it read
      // p 0.819, 80, and owner_can_block_sells / hidden_power 0).
      expect(armed.risk_score).toBeGreaterThanOrEqual(before.risk_score);
      expect(Number(armed.probabilityFraud)).toBeGreaterThanOrEqual(
        Number(before.probabilityFraud),
      );
      expect(armed.risk_indicators).toMatchObject({ owner_can_block_sells: 1, hidden_power: 1 });
      // Nine minutes on, inside the reuse TTL: the armed verdict, now from the cache.
      clock.advance(9 * 60_000);
      const later = await rugPull(token);
      expect(later.risk_indicators.is_honeypot).toBe(1);
      expect(later.checked_times).toBe(4);
      // The wallet check of the token's own address uses the same finding (its cached verdict
      // from before was dropped when the token's verdict was computed).
      const own = await walletCheck(token);
      expect(own.forensic_details['honeypot_related_address']).toBe('1');
      expect(own.forensic_details.data_source).toContain('rug-pull-checker');
      expect([own.status, own.probabilityFraud]).toEqual(['Fraud', '1.0000000000']);
    });

    it('a token posing as USDT: fake_token in the wallet check; the rug pull checker rates its code', async () => {
      const preset =
        (await import('@openzeppelin/contracts-v4/build/contracts/ERC20PresetFixedSupply.json')) as {
          abi: unknown[];
          bytecode: Hex;
        };
      // From account 3, whose tokens are no honeypots: the creator does not decide here.
      const account = privateKeyToAccount(ACCOUNT_KEYS[2]);
      const chain = {
        id: 1,
        name: 'anvil',
        nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
        rpcUrls: { default: { http: [anvil.url] } },
      };
      const wallet = createWalletClient({ account, chain, transport: http(anvil.url) });
      const hash = await wallet.deployContract({
        abi: preset.abi,
        bytecode: preset.bytecode,
        args: ['Tether USD', 'USDT', parseEther('1000'), account.address],
      });
      const fake = (
        await devnet.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 })
      ).contractAddress!;
      const asWallet = await walletCheck(fake);
      expect(asWallet.forensic_details['fake_token']).toBe('1');
      expect(asWallet.status).toBe('Fraud');
      // An OpenZeppelin preset behaves like the token it copies: Low Risk by its code. The name
      // is the wallet check's finding (ADR 0302, third amendment: why not in both).
      const asToken = await rugPull(fake);
      expect([asToken.risk_score, asToken.risk_status, asToken.status]).toEqual([
        0,
        'Low Risk',
        'Not Fraud',
      ]);
    });
  });
});

import { FakeClock, startAnvil, type AnvilInstance } from '@meridian/testing';
import { type Abi, type Address, type Hex } from 'viem';
import { deployRealWorldToken, REAL_WORLD_TOKENS } from '../bench/real-world-corpus';
import { rugPullResponseSchema } from '../src/wallet/audit-response.schemas';
import { startAuditApp, type AuditTestApp } from './support/audit-app';
import { fixture, setUpDevnet, SUPPLY, type Devnet } from './support/devnet';
import { InTestCredentialSource } from './support/in-test-credentials';

const KEY = 'real-world-key';

/**
 * The rug pull checker on tokens shaped like real-world contracts (bench/real-world-corpus.ts):
 * canonical tokens are not called malicious, ordinary anti-bot rules are not honeypots, and the
 * scam patterns the first version missed (armed fee switches, array bot lists, admins without
 * owner()) are found.
 */
describe('rug pull checker on real-world token shapes (anvil + Uniswap V2)', () => {
  let anvil: AnvilInstance;
  let audit: AuditTestApp;
  let devnet: Devnet;
  const tokens: Record<string, Address> = {};
  const clock = new FakeClock(new Date());

  beforeAll(async () => {
    anvil = await startAnvil({ chainId: 1 });
    devnet = await setUpDevnet(anvil.url);
    for (const token of REAL_WORLD_TOKENS) {
      const f = fixture(token.contract as 'CleanToken') as { abi: Abi; bytecode: Hex };
      tokens[token.contract] = await deployRealWorldToken(devnet, token, f, SUPPLY);
    }
    const credentials = new InTestCredentialSource().add(KEY, {
      planId: 'enterprise',
      auditQuota: { checksPerDay: 1e6, requestsPerSecond: 1e6 },
    });
    audit = await startAuditApp(
      {
        AUDIT_RPC_URLS: JSON.stringify({ ETH: anvil.url }),
        AUDIT_DEX_ROUTERS: JSON.stringify({ ETH: [devnet.uniswap.router] }),
        AUDIT_VERDICT_TTL_MS: '0',
        // Tokens of one deployer are checked each on its own (a honeypot's creator would make
        // the others Fraud, ADR 0302 amendment).
        AUDIT_HONEYPOT_CREATOR_LINK: 'false',
      },
      { clock, credentials },
    );
  }, 240_000);

  afterAll(async () => {
    await audit?.close();
    await anvil?.stop();
  });

  const check = async (contract: string) => {
    clock.advance(1_000);
    const response = await audit.post(
      '/v1/rug-pull/check',
      { network: 'ETH', contract_address: tokens[contract]! },
      KEY,
    );
    if (response.status !== 200)
      throw new Error(`${contract}: ${response.status} ${JSON.stringify(response.body)}`);
    return rugPullResponseSchema.parse(response.body).data;
  };

  it.each(REAL_WORLD_TOKENS.map((t) => [t.contract, t.malicious, t.pattern] as const))(
    '%s (malicious: %s): %s',
    async (contract, malicious) => {
      const data = await check(contract);
      expect({ contract, fraud: data.status === 'Fraud', risk: data.risk_status }).toEqual({
        contract,
        fraud: malicious,
        risk: malicious ? expect.stringMatching(/Medium|High/) : 'Low Risk',
      });
    },
  );

  it('USDT-style token (transfer/approve return nothing): a verdict, not a 502, with its powers listed', async () => {
    const data = await check('TetherLikeToken');
    expect(data.risk_indicators).toMatchObject({
      is_honeypot: 0,
      is_mintable: 1,
      is_blacklisted: 1,
      transfer_pausable: 1,
      slippage_modifiable: 1,
      owner_can_block_sells: 0,
    });
    expect(data.centralization_risk.status).toBe('High');
  });

  it("WETH9's public withdraw is no privileged withdrawal", async () => {
    const data = await check('WETH9Like');
    expect(data.forensic_details.privilege_withdraw).toBe(0);
    expect(data.risk_indicators.hidden_owner).toBe(0);
  });

  it('an admin without owner() is found by what the code guards: hidden_owner, fee switch', async () => {
    const data = await check('HiddenAdminFeeToken');
    expect(data.risk_indicators).toMatchObject({
      hidden_owner: 1,
      owner_can_block_sells: 1,
      slippage_modifiable: 1,
    });
  });

  it('an armed fee switch unused today is found by trading after the call', async () => {
    const data = await check('RenouncedTaxWalletToken');
    expect(data.risk_indicators.sell_tax).toBe(0);
    expect(data.risk_indicators.owner_renounced).toBe(1);
    expect(data.risk_indicators.max_sell_tax_by_owner).toBeGreaterThanOrEqual(0.5);
  });

  it('a bot list filled with an array is probed with an array: is_blacklisted, hidden power', async () => {
    const data = await check('ArrayBotListToken');
    expect(data.risk_indicators).toMatchObject({ is_blacklisted: 1, hidden_power: 1 });
  });

  it('a wallet transfer that reports success and moves nothing is no 100 % tax and no honeypot', async () => {
    const data = await check('SilentTransferToken');
    expect(data.risk_indicators).toMatchObject({
      is_honeypot: 0,
      transfer_tax: null,
      buy_tax: 0,
      sell_tax: 0,
    });
    expect(data.risk_status).toBe('Low Risk');
  });

  it('Dai-style wards: the mint power is seen (from the creator, a ward) and stays centralisation', async () => {
    const data = await check('DaiLike');
    expect(data.risk_indicators).toMatchObject({
      is_mintable: 1,
      hidden_owner: 1,
      hidden_power: 0,
    });
    expect(data.status).toBe('Not Fraud');
  });

  it('the verdict cache is keyed by the code: new code at the same address is analysed again', async () => {
    const cached = await startAuditApp(
      {
        AUDIT_RPC_URLS: JSON.stringify({ ETH: anvil.url }),
        AUDIT_DEX_ROUTERS: JSON.stringify({ ETH: [devnet.uniswap.router] }),
        AUDIT_VERDICT_TTL_MS: String(10 * 60_000),
      },
      {
        clock,
        credentials: new InTestCredentialSource().add(KEY, {
          planId: 'enterprise',
          auditQuota: { checksPerDay: 1e6, requestsPerSecond: 1e6 },
        }),
      },
    );
    try {
      const ask = async () => {
        const response = await cached.post(
          '/v1/rug-pull/check',
          { network: 'ETH', contract_address: tokens['UniLike']! },
          KEY,
        );
        return rugPullResponseSchema.parse(response.body).data;
      };
      expect((await ask()).risk_indicators.hidden_power).toBe(0);
      expect((await ask()).risk_indicators.hidden_power).toBe(0); // served from the cache
      // "Redeploy" at the same address (as CREATE2 or a devnet restart would): a token of the
      // same storage layout whose innocently named owner function mints.
      await devnet.publicClient.request({
        method: 'anvil_setCode',
        params: [tokens['UniLike']!, fixture('HiddenMintToken').deployedBytecode],
      } as never);
      const after = await ask();
      expect(after.risk_indicators.hidden_power).toBe(1);
      expect(after.status).toBe('Fraud');
    } finally {
      await cached.close();
    }
  });
});

import { FakeClock, startAnvil, type AnvilInstance } from '@meridian/testing';
import {
  encodeFunctionData,
  getAddress,
  keccak256,
  parseAbi,
  parseEther,
  toHex,
  type Address,
  type Hex,
} from 'viem';
import {
  rugPullResponseSchema,
  walletCheckResponseSchema,
} from '../src/wallet/audit-response.schemas';
import { startAuditApp, type AuditTestApp } from './support/audit-app';
import { startBillingLedger, type RunningBillingLedger } from './support/billing-ledger.process';
import { fixture, setUpDevnet, SUPPLY, type Devnet } from './support/devnet';

/** Tornado.Cash: 0.1 ETH on mainnet (etherscan-tornado-cash pack). */
const TORNADO_POOL = '0x12D66f87A04A9E220743712cE6d9bB1B5616B8Fc' as Address;
const OWNER_ABI = parseAbi(['function setMarket(address)']);

describe('audit scenarios on an anvil devnet standing in for ETH', () => {
  let anvil: AnvilInstance;
  let billing: RunningBillingLedger;
  let audit: AuditTestApp;
  let devnet: Devnet;
  let key: string;
  const tokens: Record<string, Address> = {};
  const clock = new FakeClock(new Date());

  beforeAll(async () => {
    [anvil, billing] = await Promise.all([startAnvil({ chainId: 1 }), startBillingLedger()]);
    devnet = await setUpDevnet(anvil.url);
    const liquidity = async (name: string, token: Address, market: boolean) => {
      const pair = await devnet.addLiquidity(token, SUPPLY / 2n, parseEther('10'));
      if (market) await devnet.send(token, OWNER_ABI, 'setMarket', [pair]);
      tokens[name] = token;
    };
    const build = (
      name: 'CleanToken' | 'HoneypotToken' | 'HiddenMintToken' | 'BlacklistToken' | 'SellTaxToken',
    ) => devnet.deploy(fixture(name).abi, fixture(name).bytecode, [SUPPLY]);
    await liquidity('clean', await build('CleanToken'), false);
    await liquidity('honeypot', await build('HoneypotToken'), true);
    await liquidity('hiddenMint', await build('HiddenMintToken'), false);
    await liquidity('blacklist', await build('BlacklistToken'), false);
    await liquidity('sellTax', await build('SellTaxToken'), true);
    const logic = await devnet.deploy(
      fixture('UpgradeableTokenLogic').abi,
      fixture('UpgradeableTokenLogic').bytecode,
    );
    const init = encodeFunctionData({
      abi: fixture('UpgradeableTokenLogic').abi,
      functionName: 'initialize',
      args: ['Proxy Token', 'PRX', SUPPLY, devnet.deployer],
    });
    await liquidity(
      'proxy',
      await devnet.deploy(fixture('UpgradeableToken').abi, fixture('UpgradeableToken').bytecode, [
        logic,
        init,
      ]),
      false,
    );
    audit = await startAuditApp(
      {
        BILLING_GRPC_URL: billing.grpcTarget,
        AUDIT_RPC_URLS: JSON.stringify({ ETH: anvil.url }),
        AUDIT_DEX_ROUTERS: JSON.stringify({ ETH: [devnet.uniswap.router] }),
        AUDIT_VERDICT_TTL_MS: '0',
        // Tokens of one deployer are checked each on its own (a honeypot's creator would make
        // the others Fraud, ADR 0302 amendment).
        AUDIT_HONEYPOT_CREATOR_LINK: 'false',
      },
      { clock },
    );
    key = (await billing.createAccount('premium')).key;
  }, 120_000);

  afterAll(async () => {
    await audit?.close();
    await Promise.all([anvil?.stop(), billing?.stop()]);
  });

  const rugPull = async (address: Address) => {
    clock.advance(5_000);
    const response = await audit.post(
      '/v1/rug-pull/check',
      { network: 'ETH', contract_address: address },
      key,
    );
    if (response.status !== 200) throw new Error(JSON.stringify(response.body));
    return rugPullResponseSchema.parse(response.body).data;
  };

  const cleanIndicators = {
    is_honeypot: 0,
    cannot_sell_all: 0,
    cannot_buy: 0,
    is_mintable: 0,
    buy_tax: 0,
    sell_tax: 0,
    transfer_tax: 0,
    hidden_owner: 0,
    can_take_back_ownership: 0,
    owner_change_balance: 0,
    transfer_pausable: 0,
    slippage_modifiable: 0,
    is_blacklisted: 0,
    is_proxy: 0,
    selfdestruct: 0,
    external_call: 0,
    owner_renounced: 0,
    has_liquidity_pool: 1,
    owner_can_block_sells: 0,
    max_sell_tax_by_owner: null,
    hidden_power: 0,
    honeypot_with_same_creator: 0,
  };
  const noForensics = {
    owner: 0,
    privilege_withdraw: 0,
    withdraw_missing: 0,
    blacklist: 0,
    selfdestruct: 0,
    is_proxy: 0,
    approval_abuse: 0,
  };

  it('clean ERC-20: Low Risk, nothing flagged, creator and creation time found', async () => {
    const data = await rugPull(tokens['clean']!);
    expect(data.risk_indicators).toEqual(cleanIndicators);
    expect(data.forensic_details).toEqual(noForensics);
    expect([data.risk_score, data.risk_status, data.status]).toEqual([0, 'Low Risk', 'Not Fraud']);
    expect(data.centralization_risk).toEqual({ score: 0, status: 'Low' });
    expect(Number(data.probabilityFraud)).toBeLessThan(0.2);
    // EIP-55, like contractAddress.
    expect(data.contractCreatorAddress).toBe(getAddress(devnet.deployer));
    expect(data.contractAddress).toBe(getAddress(tokens['clean']!));
    expect(data.contractCreationTime).toEqual(expect.stringMatching(/Z$/));
    expect(data.checked_times).toBe(1);
  });

  it('honeypot (buy works, sell reverts): is_honeypot, the owner still holds the switch, 100, Fraud', async () => {
    const data = await rugPull(tokens['honeypot']!);
    // Armed (setMarket(pair) called), the switch shows the other way: the owner's setMarket to
    // another address makes sales work again. A live trap shows the powers of a dormant one and
    // scores no lower (QA M2: it read 80 with both powers 0, below the dormant trap's 100).
    expect(data.risk_indicators).toEqual({
      ...cleanIndicators,
      is_honeypot: 1,
      sell_tax: null,
      owner_can_block_sells: 1,
      hidden_power: 1,
    });
    expect(data.forensic_details).toEqual({ ...noForensics, owner: 1 });
    expect([data.risk_score, data.risk_status, data.status]).toEqual([100, 'High Risk', 'Fraud']);
    expect(data.probabilityFraud).toBe('1.0000000000');
  });

  it('hidden mint behind an innocent name: proven by simulating the owner call, malice', async () => {
    const data = await rugPull(tokens['hiddenMint']!);
    // Minting changes the supply, not a holder's balance: one power, counted once.
    expect(data.risk_indicators).toEqual({
      ...cleanIndicators,
      is_mintable: 1,
      hidden_power: 1,
      // Measured: the owner's calls leave sales untaxed.
      max_sell_tax_by_owner: 0,
    });
    expect(data.forensic_details).toEqual({ ...noForensics, owner: 1 });
    expect([data.risk_score, data.risk_status, data.status]).toEqual([50, 'High Risk', 'Fraud']);
    expect(data.centralization_risk).toEqual({ score: 25, status: 'Medium' });
  });

  it('declared blacklist of named holders: is_blacklisted, a centralisation risk, not malice', async () => {
    const data = await rugPull(tokens['blacklist']!);
    expect(data.risk_indicators).toEqual({
      ...cleanIndicators,
      is_blacklisted: 1,
      max_sell_tax_by_owner: 0,
    });
    expect(data.forensic_details).toEqual({ ...noForensics, owner: 1, blacklist: 1 });
    expect([data.risk_score, data.risk_status, data.status]).toEqual([0, 'Low Risk', 'Not Fraud']);
    expect(data.centralization_risk).toEqual({ score: 25, status: 'Medium' });
  });

  it('30 % sell tax the owner can raise until sales fail: owner_can_block_sells, Fraud', async () => {
    const data = await rugPull(tokens['sellTax']!);
    expect(data.risk_indicators).toEqual({
      ...cleanIndicators,
      sell_tax: expect.closeTo(0.3, 2) as unknown as number,
      slippage_modifiable: 1,
      owner_can_block_sells: 1,
      max_sell_tax_by_owner: expect.closeTo(0.99, 2) as unknown as number,
    });
    expect(data.forensic_details).toEqual({ ...noForensics, owner: 1 });
    expect([data.risk_score, data.risk_status, data.status]).toEqual([95, 'High Risk', 'Fraud']);
  });

  it('upgradeable (EIP-1967 UUPS) proxy: is_proxy, a centralisation risk', async () => {
    const data = await rugPull(tokens['proxy']!);
    expect(data.risk_indicators).toEqual({ ...cleanIndicators, is_proxy: 1 });
    expect(data.forensic_details).toEqual({ ...noForensics, owner: 1, is_proxy: 1 });
    expect([data.risk_score, data.risk_status]).toEqual([0, 'Low Risk']);
    expect(data.centralization_risk).toEqual({ score: 30, status: 'Medium' });
  });

  it('rejects an address without code with 400 not_a_contract', async () => {
    const response = await audit.post(
      '/v1/rug-pull/check',
      { network: 'ETH', contract_address: '0x3333333333333333333333333333333333333333' },
      key,
    );
    expect([response.status, response.body.error]).toEqual([400, 'not_a_contract']);
    const missing = await audit.post(
      '/v1/rug-pull/check',
      { network: 'ETH', address: tokens['clean'] },
      key,
    );
    expect([missing.status, missing.body.error]).toEqual([400, 'missing_contract_address']);
  });

  it("answers Uniswap V2's router and factory, contracts that are no token, 400 not_a_token (QA L3)", async () => {
    for (const contract of [devnet.uniswap.router, devnet.uniswap.factory]) {
      const response = await audit.post(
        '/v1/rug-pull/check',
        { network: 'ETH', contract_address: contract },
        key,
      );
      expect([contract, response.status, response.body]).toEqual([
        contract,
        400,
        expect.objectContaining({ error: 'not_a_token', field: 'contract_address' }),
      ]);
    }
    // The pair is a token (the pool's LP token): it gets a verdict.
    const pair = await devnet.publicClient.readContract({
      address: devnet.uniswap.factory,
      abi: parseAbi(['function allPairs(uint256) view returns (address)']),
      functionName: 'allPairs',
      args: [0n],
    });
    expect((await rugPull(pair)).risk_indicators.is_mintable).toBe(1);
  });

  it('flags a wallet that deposited into a Tornado Cash pool (anvil_setCode at the real pool address) as mixer', async () => {
    await devnet.publicClient.request({
      method: 'anvil_setCode' as never,
      params: [TORNADO_POOL, fixture('MockTornadoPool').deployedBytecode] as never,
    });
    const depositor = '0x000000000000000000000000000000000000d3d0' as Address;
    await devnet.publicClient.request({
      method: 'anvil_setBalance' as never,
      params: [depositor, toHex(parseEther('1'))] as never,
    });
    await devnet.publicClient.request({
      method: 'anvil_impersonateAccount' as never,
      params: [depositor] as never,
    });
    const hash = (await devnet.publicClient.request({
      method: 'eth_sendTransaction' as never,
      params: [
        {
          from: depositor,
          to: TORNADO_POOL,
          value: toHex(parseEther('0.1')),
          data: encodeFunctionData({
            abi: fixture('MockTornadoPool').abi,
            functionName: 'deposit',
            args: [keccak256('0x01')],
          }),
        },
      ] as never,
    })) as Hex;
    expect(
      (await devnet.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 })).status,
    ).toBe('success');
    clock.advance(5_000);
    const response = await audit.post(
      '/v1/wallet-audit/check',
      { network: 'ETH', address: depositor },
      key,
    );
    const { data } = walletCheckResponseSchema.parse(response.body);
    expect(data.status).toBe('Fraud');
    expect(data.probabilityFraud).toBe('1.0000000000');
    expect([
      data.forensic_details['mixer'],
      data.forensic_details['money_laundering'],
      data.forensic_details['sanctioned'],
    ]).toEqual(['1', '1', '0']);
    expect(data.forensic_details['data_source']).toBe('onchain');
  });

  it('a wallet with ordinary history is "Not Fraud"; the deployer created contracts', async () => {
    clock.advance(5_000);
    const response = await audit.post(
      '/v1/wallet-audit/audit',
      { network: 'ETH', address: devnet.deployer },
      key,
    );
    const data = (response.body as { data: Record<string, unknown> }).data;
    expect(data['status']).toBe('Not Fraud');
    expect(
      (data['userDetails'] as { transaction_count: number }).transaction_count,
    ).toBeGreaterThan(10);
  });

  it('a token contract answers its symbol in `token`; one copying a canonical token (USDC) is fake_token', async () => {
    clock.advance(5_000);
    const clean = walletCheckResponseSchema.parse(
      (
        await audit.post(
          '/v1/wallet-audit/check',
          { network: 'ETH', address: tokens['clean'] },
          key,
        )
      ).body,
    ).data;
    expect([clean.token, clean.status, clean.forensic_details['fake_token']]).toEqual([
      'CLEAN',
      'Not Fraud',
      '0',
    ]);
    const logic = await devnet.deploy(
      fixture('UpgradeableTokenLogic').abi,
      fixture('UpgradeableTokenLogic').bytecode,
    );
    const init = encodeFunctionData({
      abi: fixture('UpgradeableTokenLogic').abi,
      functionName: 'initialize',
      args: ['USD Coin', 'USDC', SUPPLY, devnet.deployer],
    });
    const fake = await devnet.deploy(
      fixture('UpgradeableToken').abi,
      fixture('UpgradeableToken').bytecode,
      [logic, init],
    );
    clock.advance(5_000);
    const data = walletCheckResponseSchema.parse(
      (await audit.post('/v1/wallet-audit/check', { network: 'ETH', address: fake }, key)).body,
    ).data;
    expect([
      data.token,
      data.status,
      data.probabilityFraud,
      data.forensic_details['fake_token'],
      data.forensic_details['data_source'],
    ]).toEqual(['USDC', 'Fraud', '1.0000000000', '1', 'onchain']);
  });
});

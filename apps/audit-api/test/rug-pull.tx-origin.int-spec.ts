import { FakeClock, startAnvil, type AnvilInstance } from '@meridian/testing';
import { type Abi, type Address, type Hex } from 'viem';
import { deployRealWorldToken, REAL_WORLD_TOKENS } from '../bench/real-world-corpus';
import { rugPullResponseSchema } from '../src/wallet/audit-response.schemas';
import { startAuditApp, type AuditTestApp } from './support/audit-app';
import { fixture, setUpDevnet, SUPPLY, type Devnet } from './support/devnet';
import { InTestCredentialSource } from './support/in-test-credentials';

const KEY = 'tx-origin-key';
const CONTRACTS = [
  'OriginSellTrapToken',
  'CodelessSellTrapToken',
  'CodelessBuyerTrapToken',
  'OriginExemptFeeToken',
  'OriginOnlyTradeToken',
  'ContractSellerBlockToken',
] as const;
type Contract = (typeof CONTRACTS)[number];

/**
 * Tokens that treat tx.origin (or accounts without code) apart, which a devnet tester found
 * called "Not Fraud" (test/fixtures/contracts/RealWorldTxOrigin.sol). A real wallet is tx.origin
 * of its trade and has no code; the one-call trade is run by a wallet that is tx.origin and by
 * one without code, the owner's calls are followed by a trade whose tx.origin is not the owner,
 * and a fork trade that bought tells the truth either way (docs/adr/0303, amendment).
 */
describe('rug pull checker on tokens that treat tx.origin apart (anvil + Uniswap V2)', () => {
  let anvil: AnvilInstance;
  let devnet: Devnet;
  /** The fork confirmation off: what the one-call simulation finds alone (network E). */
  let oneCall: AuditTestApp;
  /** The fork confirmation on (the default). */
  let withFork: AuditTestApp;
  const tokens = {} as Record<Contract, Address>;
  const clock = new FakeClock(new Date());

  beforeAll(async () => {
    anvil = await startAnvil({ chainId: 1 });
    devnet = await setUpDevnet(anvil.url);
    for (const contract of CONTRACTS) {
      const entry = REAL_WORLD_TOKENS.find((t) => t.contract === contract)!;
      const f = fixture(contract) as { abi: Abi; bytecode: Hex };
      tokens[contract] = await deployRealWorldToken(devnet, entry, f, SUPPLY);
    }
    const start = (fork: boolean) =>
      startAuditApp(
        {
          AUDIT_RPC_URLS: JSON.stringify({ ETH: anvil.url }),
          AUDIT_DEX_ROUTERS: JSON.stringify({ ETH: [devnet.uniswap.router] }),
          AUDIT_VERDICT_TTL_MS: '0',
          // Tokens of one deployer are checked each on its own (a honeypot's creator would make
          // the others Fraud, ADR 0302 amendment).
          AUDIT_HONEYPOT_CREATOR_LINK: 'false',
          AUDIT_FORK_SIMULATION: String(fork),
        },
        {
          clock,
          credentials: new InTestCredentialSource().add(KEY, {
            planId: 'enterprise',
            auditQuota: { checksPerDay: 1e6, requestsPerSecond: 1e6 },
          }),
        },
      );
    oneCall = await start(false);
    withFork = await start(true);
  }, 240_000);

  afterAll(async () => {
    await oneCall?.close();
    await withFork?.close();
    await anvil?.stop();
  });

  const check = async (app: AuditTestApp, contract: Contract) => {
    clock.advance(1_000);
    const response = await app.post(
      '/v1/rug-pull/check',
      { network: 'ETH', contract_address: tokens[contract] },
      KEY,
    );
    if (response.status !== 200)
      throw new Error(`${contract}: ${response.status} ${JSON.stringify(response.body)}`);
    return rugPullResponseSchema.parse(response.body).data;
  };

  // One call's two stand-in wallets cannot tell these two honeypots from the anti-bot rules that
  // mirror them (ContractSellerBlockToken below; a sale only tx.origin may make): alone, the
  // one-call trade reports a restriction; the fork trade, a real wallet's, shows the trap.
  it.each(['OriginSellTrapToken', 'CodelessSellTrapToken'] as const)(
    '%s: a sale refused to real wallets is a restriction without the fork, a honeypot with it',
    async (contract) => {
      const alone = await check(oneCall, contract);
      expect(alone.risk_indicators).toMatchObject({
        is_honeypot: 0,
        cannot_sell_all: 1,
        cannot_buy: 0,
      });
      expect({ status: alone.status, risk: alone.risk_status }).toEqual({
        status: 'Not Fraud',
        risk: 'Medium Risk',
      });
      const data = await check(withFork, contract);
      expect(data.risk_indicators).toMatchObject({ is_honeypot: 1, cannot_buy: 0 });
      expect({ status: data.status, risk: data.risk_status }).toEqual({
        status: 'Fraud',
        risk: 'High Risk',
      });
    },
    120_000,
  );

  it('an anti-bot rule that refuses contracts a sale is no honeypot: a restriction alone, cleared by the fork', async () => {
    const alone = await check(oneCall, 'ContractSellerBlockToken');
    expect(alone.risk_indicators).toMatchObject({ is_honeypot: 0, cannot_sell_all: 1 });
    expect(alone.status).toBe('Not Fraud');
    const data = await check(withFork, 'ContractSellerBlockToken');
    expect({
      honeypot: data.risk_indicators.is_honeypot,
      restricted: data.risk_indicators.cannot_sell_all,
      risk: data.risk_status,
      status: data.status,
    }).toEqual({ honeypot: 0, restricted: 0, risk: 'Low Risk', status: 'Not Fraud' });
  }, 120_000);

  it('only codeless buyers, and tx.origin cannot sell: the fork trade that bought shows the honeypot', async () => {
    // One call alone: every probe wallet is either a contract or not tx.origin.
    const alone = await check(oneCall, 'CodelessBuyerTrapToken');
    expect(alone.risk_indicators).toMatchObject({ cannot_buy: 1, is_honeypot: 0 });
    // A plain account on the fork buys, then cannot sell: that result stands.
    const data = await check(withFork, 'CodelessBuyerTrapToken');
    expect(data.risk_indicators).toMatchObject({ is_honeypot: 1, cannot_buy: 0 });
    expect(data.status).toBe('Fraud');
  }, 120_000);

  it('a fee the owner raises and exempts itself from by tx.origin is found by the trade after the call', async () => {
    const data = await check(oneCall, 'OriginExemptFeeToken');
    expect(data.risk_indicators.sell_tax).toBe(0);
    expect(data.risk_indicators.max_sell_tax_by_owner).toBeGreaterThanOrEqual(0.5);
    expect(data.risk_indicators).toMatchObject({
      owner_can_block_sells: 1,
      slippage_modifiable: 1,
      is_honeypot: 0,
    });
    expect(data.status).toBe('Fraud');
  });

  it('an anti-bot rule that lets only tx.origin trade is no honeypot; the fork clears it', async () => {
    // One call alone: the wallet without code is not tx.origin, so it cannot buy (Medium, as
    // before this change: a node that refuses the fork keeps it there, never at honeypot).
    const alone = await check(oneCall, 'OriginOnlyTradeToken');
    expect(alone.risk_indicators).toMatchObject({ is_honeypot: 0, cannot_buy: 1 });
    expect(alone.status).toBe('Not Fraud');
    const data = await check(withFork, 'OriginOnlyTradeToken');
    expect({
      honeypot: data.risk_indicators.is_honeypot,
      cannotBuy: data.risk_indicators.cannot_buy,
      risk: data.risk_status,
      status: data.status,
    }).toEqual({ honeypot: 0, cannotBuy: 0, risk: 'Low Risk', status: 'Not Fraud' });
  }, 120_000);
});

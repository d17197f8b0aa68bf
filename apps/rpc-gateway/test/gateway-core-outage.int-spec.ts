// Test-only file; see gateway-harness.ts for the boundary rule note.
import {
  createTestDatabase,
  startAnvil,
  type AnvilInstance,
  type BillingLedgerProcess,
  type TestDatabase,
} from '@meridian/testing';
import {
  metricValue,
  provisionNamespace,
  rpc,
  startBillingLedger,
  startGateway,
  type RunningGateway,
} from './gateway-harness';

/**
 * A region cut from the core: the REAL billing-ledger (own process) resolves two tokens, then
 * stops. Freshness is 1 ms, so every later call finds its token past it and the gateway would
 * ask billing-ledger again: a token resolved before the cut is still served (stale-if-error,
 * ADR 0213), one never seen is 503, and a gateway with stale-if-error off answers 503 for both.
 */
const OPERATOR_TOKEN = 'op_gateway_outage_test_0123456789';

describe('rpc-gateway with billing-ledger gone (a region cut from the core)', () => {
  let db: TestDatabase;
  let nats: Awaited<ReturnType<typeof provisionNamespace>>;
  let anvil: AnvilInstance;
  let ledger: BillingLedgerProcess;
  let keeping: RunningGateway;
  let strict: RunningGateway;
  let known: string;
  let unseen: string;

  const blockNumber = (gateway: RunningGateway, token: string) =>
    rpc(`${gateway.url}/${token}`, { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber' });

  beforeAll(async () => {
    [db, nats, anvil] = await Promise.all([
      createTestDatabase({ prefix: 'gw_outage' }),
      provisionNamespace(),
      startAnvil({ chainId: 1 }),
    ]);
    ledger = await startBillingLedger({
      databaseUrl: db.url,
      nats,
      operatorToken: OPERATOR_TOKEN,
      startTimeoutMs: 90_000,
    });
    const account = await ledger.createAccount({
      name: 'outage',
      type: 'individual',
      plan: 'growth',
    });
    const newToken = async () =>
      (
        await ledger.call('POST', '/api/v1/access-tokens', account.key, {
          network: 'eth-mainnet',
        })
      )['token'] as string;
    known = await newToken();
    unseen = await newToken();

    const env = {
      REGION: 'eu',
      LOG_LEVEL: 'fatal',
      NATS_URL: nats.url,
      NATS_PREFIX: nats.prefix,
      BILLING_GRPC_URL: ledger.grpcTarget,
      UPSTREAMS: JSON.stringify({ 'eth-mainnet': [anvil.url] }),
      CREDENTIAL_TTL_MS: '1',
    };
    [keeping, strict] = await Promise.all([
      startGateway(env),
      startGateway({ ...env, CREDENTIAL_STALE_IF_ERROR_MS: '0' }),
    ]);
  }, 180_000);

  afterAll(async () => {
    await keeping?.stop().catch(() => undefined);
    await strict?.stop().catch(() => undefined);
    await ledger?.stop().catch(() => undefined);
    await anvil?.stop();
    await nats?.cleanup().catch(() => undefined);
    await db?.drop().catch(() => undefined);
  });

  it('serves the tokens it resolved before the cut, 503 for the others; 503 for all with stale-if-error off', async () => {
    for (const gateway of [keeping, strict])
      expect((await blockNumber(gateway, known)).status).toBe(200);

    await ledger.stop();

    for (let i = 0; i < 5; i++) {
      const served = await blockNumber(keeping, known);
      expect(served.status).toBe(200);
      expect((served.json as { result?: string }).result).toMatch(/^0x/);
    }
    const never = await blockNumber(keeping, unseen);
    expect(never.status).toBe(503);
    expect(never.headers.get('retry-after')).not.toBeNull();
    expect((never.json as { error: { code: number } }).error.code).toBe(-32000);

    expect((await blockNumber(strict, known)).status).toBe(503);
    expect((await blockNumber(strict, unseen)).status).toBe(503);

    // Each failed refresh that left the known token in service is counted (it may still be
    // failing: grpc-js reports the refused connection on its own schedule).
    const deadline = Date.now() + 10_000;
    while ((await metricValue(keeping.url, 'rpc_gateway_credentials_kept_total', {})) < 1) {
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });
});

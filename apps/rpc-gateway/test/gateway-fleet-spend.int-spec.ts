import type { ChildProcess } from 'node:child_process';
import {
  createTestDatabase,
  freePort,
  startFakeSuiUpstream,
  type BillingLedgerProcess,
  type FakeSuiUpstream,
  type TestDatabase,
} from '@meridian/testing';
import type { PlanLimiter } from '../src/limits/plan-limiter';
import {
  provisionNamespace,
  rpc,
  startBillingLedger,
  startGateway,
  startRedis,
  type RunningGateway,
} from './gateway-harness';

/**
 * The spend estimate across the fleet (ADR 0201 amendment "The estimate across the fleet"): two
 * gateways leasing one Redis (a redis-server of this test's own, so it can be stopped) and the
 * REAL billing-ledger. Each gateway alone spends the whole remainder of the last state, so two
 * overdraw by about one remainder (gateway-spend-estimate.int-spec.ts: 400 calls where 200 are
 * paid); leasing chunks of one pool per state, the fleet spends the remainder plus at most one
 * chunk and one call per process. CU from COMPAT (network S: 100 a call).
 */
const OPERATOR_TOKEN = 'op_gateway_fleet_spend_0123456789';
const S = 100;
/** The documented bound per process: a chunk (1/32 of 20,000, above the 500 minimum) and a call. */
const PER_PROCESS_CU = 625 + S;

interface Answer {
  id: number | null;
  result?: unknown;
  error?: { code: number };
}

describe('rpc-gateway: the spend estimate leased across the fleet (real billing-ledger, Redis)', () => {
  let db: TestDatabase;
  let nats: Awaited<ReturnType<typeof provisionNamespace>>;
  let sui: FakeSuiUpstream;
  let ledger: BillingLedgerProcess;
  let redisPort: number;
  let redis: ChildProcess;
  const gateways: RunningGateway[] = [];

  beforeAll(async () => {
    redisPort = await freePort();
    [db, nats, sui, redis] = await Promise.all([
      createTestDatabase({ prefix: 'gw_fleet_spend' }),
      provisionNamespace(),
      startFakeSuiUpstream(),
      startRedis(redisPort),
    ]);
    ledger = await startBillingLedger({
      databaseUrl: db.url,
      nats,
      operatorToken: OPERATOR_TOKEN,
      startTimeoutMs: 240_000,
    });
    for (let i = 0; i < 2; i++)
      gateways.push(
        await startGateway({
          REGION: 'shared',
          NATS_URL: nats.url,
          NATS_PREFIX: nats.prefix,
          BILLING_GRPC_URL: ledger.grpcTarget,
          UPSTREAMS: JSON.stringify({}),
          SUI_UPSTREAM_URLS: sui.url,
          GRPC_ENABLED: 'false',
          RATE_LIMIT_REDIS_URL: `redis://127.0.0.1:${redisPort}`,
          RATE_LIMIT_KEY_PREFIX: `${nats.prefix}:rps:`,
          // The bound is the pool's: a lease that fails open (the store late past its patience
          // on a loaded machine) admits alone, as ADR 0201 allows.
          RATE_LIMIT_STORE_PATIENCE_MS: '10000',
        }),
      );
  }, 300_000);

  afterAll(async () => {
    await Promise.all(gateways.map((g) => g.stop().catch(() => undefined)));
    await ledger?.stop();
    await sui?.close();
    if (redis?.exitCode === null) redis.kill('SIGKILL');
    await nats?.cleanup().catch(() => undefined);
    await db?.drop().catch(() => undefined);
  });

  /** An Enterprise account of `allowanceCu` CU at 800 RPS with a token of network S. */
  const account = async (name: string, allowanceCu: number) => {
    const created = await ledger.call('POST', '/api/v1/admin/accounts', OPERATOR_TOKEN, {
      name,
      type: 'team',
      plan: 'enterprise',
      contract: { allowance_cu: allowanceCu, node_rps: 800 },
    });
    const key = (created['api_key'] as { key: string }).key;
    const token = (
      await ledger.call('POST', '/api/v1/access-tokens', key, {
        network: 'sui-mainnet',
      })
    )['token'] as string;
    return { key, token };
  };

  /**
   * 20 batches of 100 calls at once, alternating between the two gateways, all under one
   * balance state: each gateway has taken the account's state (an unbilled call resolves its
   * token), then billing-ledger is paused (SIGSTOP) until the burst is answered. The bound
   * asserted is the pool's, per state. A state that arrives mid-burst starts a new pool, and
   * usage flushed before it was computed but not yet applied is in neither: the lag term ADR 0201
   * names and leaves (a loaded CI machine spread one burst over two states: 29,500 CU served).
   */
  const burst = async (token: string) => {
    for (const gateway of gateways) {
      const resolved = await rpc(`${gateway.url}/${token}/`, {
        jsonrpc: '2.0',
        id: 0,
        method: 'suix_noSuchMethod',
        params: [],
      });
      expect(resolved.json).toMatchObject({ error: { code: -32601 } });
    }
    ledger.process.kill('SIGSTOP');
    try {
      return await answered(token);
    } finally {
      ledger.process.kill('SIGCONT');
    }
  };

  const answered = async (token: string) => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, b) =>
        rpc(
          `${gateways[b % 2]!.url}/${token}/`,
          Array.from({ length: 100 }, (_, i) => ({
            jsonrpc: '2.0',
            id: b * 100 + i,
            method: 'suix_getLatestSuiSystemState',
            params: [],
          })),
        ),
      ),
    );
    const calls = answers.flatMap((a) => (Array.isArray(a.json) ? (a.json as Answer[]) : []));
    return {
      statuses: new Set(answers.map((a) => a.status)),
      served: calls.filter((c) => c.result !== undefined).length,
    };
  };

  /** Waits until billing-ledger has applied `cu` of usage; then its balance. */
  const settled = async (key: string, cu: number) => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const usage = await ledger.call('GET', '/api/v1/account/usage', key);
      if (Number(usage['total_cu']) >= cu || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    return ledger.call('GET', '/api/v1/account/balance', key);
  };

  const storeConnected = () =>
    gateways.every(
      (g) => (g.runtime as unknown as { planLimiter: PlanLimiter }).planLimiter.store!.connected,
    );

  it('two gateways on a 20,000 CU state: the fleet serves the remainder plus at most a chunk and a call per process (alone: about twice the remainder)', async () => {
    const { key, token } = await account('fleet spend', 20_000);
    const { statuses, served } = await burst(token);
    // The plan's 800 RPS is fleet-wide too (ADR 0102): some batches are 429 before any CU.
    expect([...statuses].filter((s) => s !== 200 && s !== 402 && s !== 429)).toEqual([]);
    // Without the pool each gateway spends the whole 20,000: ~400 calls.
    expect(served * S).toBeLessThanOrEqual(20_000 + 2 * PER_PROCESS_CU);
    // Chunks one gateway holds unspent are not another's: at most one each goes unserved.
    expect(served * S).toBeGreaterThanOrEqual(20_000 - 2 * PER_PROCESS_CU);
    const balance = await settled(key, served * S);
    expect(Number(balance['overdraft_cu'])).toBeLessThanOrEqual(2 * PER_PROCESS_CU);
  }, 120_000);

  it('a call the pool cannot cover is refused whole: HTTP 402 and -32040, as a spent estimate is', async () => {
    const { token } = await account('fleet spend, single call', 20_000);
    const batch = (from: number) =>
      Array.from({ length: 100 }, (_, i) => ({
        jsonrpc: '2.0',
        id: from + i,
        method: 'suix_getLatestSuiSystemState',
        params: [],
      }));
    // One gateway leases the whole pool (2 × 100 calls × 100 CU) ...
    for (const from of [0, 100]) {
      const spent = await rpc(`${gateways[0]!.url}/${token}/`, batch(from));
      expect(spent.status).toBe(200);
    }
    // ... and the other, whose last state still says 20,000 CU, finds it empty (before the fix:
    // HTTP 200 with the -32040 object).
    const single = await rpc(`${gateways[1]!.url}/${token}/`, {
      jsonrpc: '2.0',
      id: 7,
      method: 'suix_getLatestSuiSystemState',
      params: [],
    });
    expect(single.status).toBe(402);
    expect(single.json).toMatchObject({ id: 7, error: { code: -32040 } });
  }, 120_000);

  it('Redis stopped: each gateway spends as it would alone (fail open to the per-process estimate), then the fleet bound returns with Redis', async () => {
    redis.kill('SIGKILL');
    await new Promise((r) => redis.once('exit', r));
    const down = await account('fleet spend, redis down', 20_000);
    const alone = await burst(down.token);
    // Served, refused as exhausted, never an error of ours; each gateway stops at its estimate.
    expect([...alone.statuses].filter((s) => s !== 200 && s !== 402 && s !== 429)).toEqual([]);
    expect(alone.served).toBeGreaterThanOrEqual(200);
    expect(alone.served).toBeLessThanOrEqual(2 * 200 + 2);

    redis = await startRedis(redisPort);
    const deadline = Date.now() + 10_000;
    while (!storeConnected() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(storeConnected()).toBe(true);
    const back = await account('fleet spend, redis back', 20_000);
    const fleet = await burst(back.token);
    expect([...fleet.statuses].filter((s) => s !== 200 && s !== 402 && s !== 429)).toEqual([]);
    expect(fleet.served * S).toBeLessThanOrEqual(20_000 + 2 * PER_PROCESS_CU);
    expect(fleet.served * S).toBeGreaterThanOrEqual(20_000 - 2 * PER_PROCESS_CU);
  }, 120_000);
});

import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  Consumers,
  Events,
  KvBuckets,
  Streams,
  usageId,
  type BalanceStateChanged,
  type UsageRecorded,
} from '@meridian/contracts';
import { cuForCall } from '@meridian/compute-units';
import { NatsNamespace, provisionMessaging } from '@meridian/platform-messaging';
import {
  createTestDatabase,
  deleteNatsNamespace,
  freePort,
  testNatsUrl,
  uniqueNatsPrefix,
} from '@meridian/testing';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { Client } from 'pg';

/**
 * Ledger benchmark: 1,000,000 node calls' worth of usage across 10,000 accounts, published to
 * JetStream the way rpc-gateway replicas flush it (one event per account and window), applied
 * by a real billing-ledger process against real Postgres and NATS. Reports usage events applied
 * per second, the end-to-end lag (publish → balance state published), and verifies every
 * account's total to the CU (balance-state KV and ledger entries), with 1 % of the events
 * published twice more as redeliveries that must change nothing.
 */
export interface LedgerBenchOptions {
  accounts?: number;
  nodeCalls?: number;
  /** Node calls aggregated into one usage event (one gateway flush of one account). */
  callsPerEvent?: number;
  duplicateShare?: number;
  log?: (line: string) => void;
}

const ROOT = resolve(__dirname, '../..');
const OPERATOR_TOKEN = 'op_bench_operator_token_0123456789';
const PLAN = 'starter';
const PLAN_ALLOWANCE = 90_000_000;
/** Accounts per bulk operator request (the route's maximum). */
const BULK = 500;
// A realistic mix: standard EVM calls, some debug traces (× 2), object-model calls (chain × 100).
const MIX: Array<{ network: 'eth-mainnet' | 'polygon-mainnet' | 'sui-mainnet'; method: string }> = [
  { network: 'eth-mainnet', method: 'eth_call' },
  { network: 'eth-mainnet', method: 'eth_getBalance' },
  { network: 'polygon-mainnet', method: 'eth_blockNumber' },
  { network: 'polygon-mainnet', method: 'debug_traceTransaction' },
  { network: 'sui-mainnet', method: 'suix_getLatestSuiSystemState' },
];

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0
    ? 0
    : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function waitFor(
  what: string,
  probe: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function pool<T>(
  items: readonly T[],
  concurrency: number,
  work: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) {
        const index = next++;
        await work(items[index]!, index);
      }
    }),
  );
}

/**
 * CPU seconds a process has used (Linux /proc, 100 ticks/s; NaN elsewhere). Reported per 1,000
 * events: on a shared machine the wall-clock rate moves with everyone else's load, this does not.
 */
function cpuSeconds(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

function node(
  script: string,
  env: Record<string, string>,
  log: (line: string) => void,
): ChildProcess {
  const child = spawn(process.execPath, ['-r', '@swc-node/register', join(ROOT, script)], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr?.on('data', (chunk: Buffer) => log(`[billing-ledger] ${chunk.toString().trim()}`));
  return child;
}

export async function runLedgerBenchmark(options: LedgerBenchOptions = {}): Promise<string> {
  const accounts = options.accounts ?? 10_000;
  const nodeCalls = options.nodeCalls ?? 1_000_000;
  const callsPerEvent = options.callsPerEvent ?? 10;
  const duplicateShare = options.duplicateShare ?? 0.01;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));

  const db = await createTestDatabase({ prefix: 'bench_ledger' });
  const prefix = uniqueNatsPrefix();
  const ns = new NatsNamespace(prefix);
  const natsUrl = testNatsUrl();
  const nc = await connect({ servers: natsUrl, name: 'bench-ledger' });
  let app: ChildProcess | undefined;
  try {
    const migrate = node('apps/billing-ledger/src/migrate.ts', { DATABASE_URL: db.url }, log);
    const code = await new Promise<number | null>((r) => migrate.on('exit', r));
    if (code !== 0) throw new Error(`migrations failed (${code})`);
    await provisionMessaging(await jetstreamManager(nc), prefix, {
      streams: [Streams.BILLING],
      consumers: [Consumers.ledgerUsage],
      buckets: [KvBuckets.balanceState, KvBuckets.revokedCredentials],
    });

    const httpPort = await freePort();
    const base = `http://127.0.0.1:${httpPort}`;
    app = node(
      'apps/billing-ledger/src/main.ts',
      {
        DATABASE_URL: db.url,
        NATS_URL: natsUrl,
        NATS_PREFIX: prefix,
        HTTP_HOST: '127.0.0.1',
        HTTP_PORT: String(httpPort),
        GRPC_PORT: String(await freePort()),
        OPERATOR_TOKEN,
        LOG_LEVEL: 'warn',
      },
      log,
    );
    await waitFor(
      'billing-ledger /readyz',
      async () => (await fetch(`${base}/readyz`)).ok,
      120_000,
    );

    // 1. Accounts through the operator API: its bulk route (500 per request, one transaction
    //    each), two requests at a time.
    const accountStart = Date.now();
    const ids: string[] = new Array(accounts);
    const chunks = Array.from({ length: Math.ceil(accounts / BULK) }, (_, c) => c * BULK);
    await pool(chunks, 2, async (first) => {
      const count = Math.min(BULK, accounts - first);
      const response = await fetch(`${base}/api/v1/admin/accounts/bulk`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${OPERATOR_TOKEN}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({
          accounts: Array.from({ length: count }, (_, i) => ({
            name: `bench-${first + i}`,
            plan: PLAN,
          })),
        }),
      });
      if (response.status !== 201)
        throw new Error(`accounts ${first}…: HTTP ${response.status} ${await response.text()}`);
      const { items } = (await response.json()) as { items: Array<{ account: { id: string } }> };
      items.forEach((item, i) => (ids[first + i] = item.account.id));
    });
    const accountSeconds = (Date.now() - accountStart) / 1000;
    log(`created ${accounts} accounts in ${accountSeconds.toFixed(1)} s`);

    // 2. Usage events: each account gets nodeCalls / accounts calls in events of callsPerEvent.
    const expected = new Map<string, number>();
    const events: UsageRecorded[] = [];
    const windowBase = Date.UTC(2026, 0, 5, 10, 0, 0);
    const callsPerAccount = Math.floor(nodeCalls / accounts);
    for (let a = 0; a < accounts; a += 1) {
      const accountId = ids[a]!;
      for (let done = 0, w = 0; done < callsPerAccount; w += 1) {
        const calls = Math.min(callsPerEvent, callsPerAccount - done);
        const counts = new Map<number, number>();
        for (let c = 0; c < calls; c += 1) {
          const pick = (a * 31 + w * 7 + c) % MIX.length;
          counts.set(pick, (counts.get(pick) ?? 0) + 1);
        }
        const items = [...counts].map(([pick, n]) => ({
          network: MIX[pick]!.network,
          method: MIX[pick]!.method,
          calls: n,
          cu: n * cuForCall(MIX[pick]!.network, MIX[pick]!.method),
        }));
        const totalCu = items.reduce((s, i) => s + i.cu, 0);
        const windowStart = new Date(windowBase + w * 1_000).toISOString();
        events.push({
          id: usageId('bench-gw', accountId, windowStart),
          kind: 'node',
          accountId,
          producerId: 'bench-gw',
          windowStart,
          windowEnd: new Date(windowBase + (w + 1) * 1_000).toISOString(),
          items,
          totalCu,
        });
        expected.set(accountId, (expected.get(accountId) ?? 0) + totalCu);
        done += calls;
      }
    }
    // Interleave accounts the way concurrent gateways would (window-major order).
    events.sort((x, y) =>
      x.windowStart === y.windowStart
        ? x.accountId.localeCompare(y.accountId)
        : x.windowStart.localeCompare(y.windowStart),
    );
    const lastPublishOf = new Map<string, number>();
    const finalSeenAt = new Map<string, number>();

    // 3. Watch balance-state events: the moment an account's remaining CU reach the final value.
    const sub = nc.subscribe(ns.subject(Events.balanceStateChanged.subjectFilter), {
      callback: (_error, msg) => {
        const state = msg.json<BalanceStateChanged>();
        const want = expected.get(state.accountId);
        if (
          want !== undefined &&
          !finalSeenAt.has(state.accountId) &&
          state.allowanceCu === PLAN_ALLOWANCE - want
        )
          finalSeenAt.set(state.accountId, Date.now());
      },
    });

    const js = jetstream(nc);
    const publishStart = Date.now();
    const cpuStart = cpuSeconds(app.pid);
    const duplicates = events.filter((_, i) => i % Math.round(1 / duplicateShare) === 0);
    await pool(events, 256, async (event) => {
      await js.publish(ns.subject(Events.usageRecorded.subjectOf(event)), JSON.stringify(event), {
        msgID: event.id,
      });
      lastPublishOf.set(event.accountId, Date.now());
    });
    // Redeliveries: the same payloads under new message ids (the stream keeps them; the ledger must not).
    await pool(duplicates, 256, async (event) => {
      await js.publish(ns.subject(Events.usageRecorded.subjectOf(event)), JSON.stringify(event), {
        msgID: `${event.id}#again`,
      });
    });
    const publishSeconds = (Date.now() - publishStart) / 1000;
    log(
      `published ${events.length} usage events (+${duplicates.length} duplicates) in ${publishSeconds.toFixed(1)} s`,
    );

    const jsm = await jetstreamManager(nc);
    await waitFor(
      'usage drained',
      async () => {
        const info = await jsm.consumers.info(
          ns.stream('BILLING'),
          ns.consumer(Consumers.ledgerUsage.durable),
        );
        return info.num_pending === 0 && info.num_ack_pending === 0;
      },
      30 * 60_000,
    );
    const drainedAt = Date.now();
    const appCpu = cpuSeconds(app.pid) - cpuStart;
    await waitFor('final balance states', async () => finalSeenAt.size === accounts, 60_000).catch(
      () => undefined,
    );
    sub.unsubscribe();
    const applySeconds = (drainedAt - publishStart) / 1000;
    const delivered = events.length + duplicates.length;

    // 4. Verify every account to the CU: the KV bucket (what the hot paths read) and the ledger.
    const kv = await new Kvm(nc).open(ns.bucket(KvBuckets.balanceState.name));
    let kvMismatches = 0;
    await pool(ids, 64, async (id) => {
      const entry = await kv.get(id);
      const state = entry?.json<BalanceStateChanged>();
      if (!state || state.allowanceCu + state.purchasedCu !== PLAN_ALLOWANCE - expected.get(id)!)
        kvMismatches += 1;
    });
    const pg = new Client({ connectionString: db.url });
    await pg.connect();
    const usage = await pg.query<{ account_id: string; cu: string; journals: string }>(
      `SELECT e.account_id, sum(e.amount_cu) AS cu, count(DISTINCT e.journal_id) AS journals
         FROM billing.ledger_entries e JOIN billing.ledger_journal j ON j.id = e.journal_id
        WHERE e.ledger = 'usage' AND j.kind = 'usage' GROUP BY e.account_id`,
    );
    let ledgerMismatches = accounts - usage.rows.length;
    for (const row of usage.rows)
      if (Number(row.cu) !== expected.get(row.account_id)) ledgerMismatches += 1;
    const journalCount = usage.rows.reduce((s, r) => s + Number(r.journals), 0);
    const unbalanced = await pg.query(
      `SELECT journal_id FROM billing.ledger_entries GROUP BY journal_id HAVING sum(amount_cu) <> 0 LIMIT 1`,
    );
    const sums = await pg.query<{ n: string }>(
      `SELECT count(*) AS n FROM billing.balances b
         JOIN (SELECT account_id, sum(amount_cu) FILTER (WHERE ledger = 'allowance') AS a, coalesce(sum(amount_cu) FILTER (WHERE ledger = 'purchased'), 0) AS p
                 FROM billing.ledger_entries GROUP BY account_id) s ON s.account_id = b.account_id
        WHERE b.allowance_cu <> s.a OR b.purchased_cu <> s.p`,
    );
    await pg.end();

    const lags = ids
      .map((id) => (finalSeenAt.get(id) ?? NaN) - (lastPublishOf.get(id) ?? NaN))
      .filter((v) => Number.isFinite(v))
      .sort((a, b) => a - b);
    const totalCu = [...expected.values()].reduce((s, v) => s + v, 0);
    const ok =
      kvMismatches === 0 &&
      ledgerMismatches === 0 &&
      journalCount === events.length &&
      unbalanced.rowCount === 0 &&
      Number(sums.rows[0]!.n) === 0;
    const lines = [
      `| measure | value |`,
      `|---|---|`,
      `| accounts (plan ${PLAN}) | ${accounts.toLocaleString('en-US')} (created via the operator bulk API in ${accountSeconds.toFixed(1)} s, ${Math.round(accounts / accountSeconds).toLocaleString('en-US')} / s) |`,
      `| node calls metered | ${(callsPerAccount * accounts).toLocaleString('en-US')} (${totalCu.toLocaleString('en-US')} CU) |`,
      `| usage events | ${events.length.toLocaleString('en-US')} (+${duplicates.length.toLocaleString('en-US')} redelivered duplicates) |`,
      `| usage events applied / s | ${Math.round(delivered / applySeconds).toLocaleString('en-US')} (${Math.round((callsPerAccount * accounts) / applySeconds).toLocaleString('en-US')} node calls / s) |`,
      `| billing-ledger CPU while applying | ${appCpu.toFixed(1)} s (${((appCpu / delivered) * 1000).toFixed(2)} CPU-s per 1,000 events; ${Math.round((appCpu / applySeconds) * 100)} % of one core) |`,
      `| first publish → consumer drained | ${applySeconds.toFixed(1)} s (publishing took ${publishSeconds.toFixed(1)} s) |`,
      `| end-to-end lag (last usage published → final balance state event), p50 / p95 / max | ${percentile(lags, 50)} / ${percentile(lags, 95)} / ${lags.at(-1) ?? NaN} ms over ${lags.length.toLocaleString('en-US')} accounts |`,
      `| verification | ${ok ? 'PASS' : 'FAIL'}: KV mismatches ${kvMismatches}, ledger mismatches ${ledgerMismatches}, usage journals ${journalCount.toLocaleString('en-US')} (expected ${events.length.toLocaleString('en-US')}), unbalanced journals ${unbalanced.rowCount}, running-sum mismatches ${sums.rows[0]!.n} |`,
    ];
    if (!ok) throw new Error(`ledger benchmark verification failed\n${lines.join('\n')}`);
    return lines.join('\n');
  } finally {
    if (app && app.exitCode === null && app.signalCode === null) {
      const exited = new Promise((r) => app!.once('exit', r));
      app.kill('SIGTERM');
      await exited;
    }
    await nc.close();
    await deleteNatsNamespace(natsUrl, prefix).catch(() => undefined);
    await db.drop().catch(() => undefined);
  }
}

/** Entry point of `npm run bench [ledger]` (bench/run.ts). */
export function runBenchmark(): Promise<string> {
  return runLedgerBenchmark({
    accounts: Number(process.env['LEDGER_BENCH_ACCOUNTS'] ?? 10_000),
    nodeCalls: Number(process.env['LEDGER_BENCH_NODE_CALLS'] ?? 1_000_000),
  });
}

import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  Events,
  KvBuckets,
  ledgerUsageConsumersOf,
  Streams,
  type BalanceStateChanged,
  type UsageFlushed,
  type UsageFlushedV2,
} from '@meridian/contracts';
import { cuForCall } from '@meridian/compute-units';
import {
  NatsNamespace,
  provisionMessaging,
  UsageFlusher,
  UsageMeter,
} from '@meridian/platform-messaging';
import {
  deployedNodeOptions,
  createTestDatabase,
  deleteNatsNamespace,
  freePort,
  testNatsUrl,
  uniqueNatsPrefix,
} from '@meridian/testing';
import { DAY } from '@meridian/time';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect, type Msg } from '@nats-io/transport-node';
import { Client } from 'pg';

/**
 * Ledger benchmark at a fleet's shape (ADR 0104): `producers` usage producers (gateway
 * replicas) each meter every one of `accounts` accounts every second for `seconds` seconds and
 * flush with the real UsageFlusher (one message per part, ADR 0103) into JetStream; a real
 * billing-ledger process applies them against real Postgres. Reports account-items applied per
 * second (an account-item = one account's usage in one producer's flush), the lag from the end
 * of a metering window to the balance state showing it (balance-state events, as a gateway
 * sees them), ledger and Postgres CPU, and verifies every account to the CU (ledger entries and
 * the KV bucket) with 1 % of the parts re-published as redeliveries. In the same run, the raw
 * Postgres ceiling: the journal and entry rows the ledger wrote, written again by a bare
 * multi-row insert loop.
 */
export interface LedgerBenchOptions {
  accounts?: number;
  producers?: number;
  seconds?: number;
  duplicateShare?: number;
  /** Fleet seconds of the backlog the capacity is measured on. */
  capacitySeconds?: number;
  /**
   * billing-ledger processes, process i applying ledger partition i of this many (ADR 0105
   * step 3; the producers route by it). Default 1.
   */
  ledgers?: number;
  log?: (line: string) => void;
}

const ROOT = resolve(__dirname, '../..');
/**
 * billing-ledger runs with the NODE_OPTIONS of its Deployment (deploy/base/core: a 64 MiB
 * semi-space), so the bench measures the process as deployed; `LEDGER_BENCH_NODE_OPTIONS`
 * overrides them (a comparison, e.g. `LEDGER_BENCH_NODE_OPTIONS=` for Node's defaults).
 */
const LEDGER_NODE_OPTIONS = deployedNodeOptions('billing-ledger') ?? '';
const OPERATOR_TOKEN = 'op_bench_operator_token_0123456789';
const PLAN = 'starter';
const PLAN_ALLOWANCE = 90_000_000;
/** Accounts per bulk operator request (the route's maximum). */
const BULK = 500;
/** One in this many accounts is watched for the lag (the watcher must not load the machine). */
const LAG_SAMPLE = 10;
/** The run that measures the retention's DDL under load, and when in it the command starts. */
const DDL_SECONDS = 20;
const DDL_START_SECONDS = 5;
// A realistic mix: standard EVM calls, some debug traces, object-model calls.
const MIX: Array<{ network: 'eth-mainnet' | 'polygon-mainnet' | 'sui-mainnet'; method: string }> = [
  { network: 'eth-mainnet', method: 'eth_call' },
  { network: 'eth-mainnet', method: 'eth_getBalance' },
  { network: 'polygon-mainnet', method: 'eth_blockNumber' },
  { network: 'polygon-mainnet', method: 'debug_traceTransaction' },
  { network: 'sui-mainnet', method: 'suix_getLatestSuiSystemState' },
];

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0
    ? NaN
    : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function waitFor(what: string, probe: () => Promise<boolean>, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
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

/** CPU seconds a process has used (Linux /proc, 100 ticks/s; NaN elsewhere). */
function cpuSeconds(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/** The local NATS server's pid (its CPU is reported beside the ledger's), if one runs here. */
function natsServerPid(): number | undefined {
  for (const entry of readdirSync('/proc').filter((name) => /^\d+$/.test(name)))
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'nats-server')
        return Number(entry);
    } catch {
      // gone meanwhile
    }
  return undefined;
}

/** CPU of the Postgres backends serving one database (pid → seconds), read from /proc. */
async function backendCpu(pg: Client, database: string): Promise<Map<number, number>> {
  const rows = await pg.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE datname = $1',
    [database],
  );
  return new Map(rows.rows.map((r) => [r.pid, cpuSeconds(r.pid)]));
}

function node(
  script: string,
  env: Record<string, string>,
  log: (line: string) => void,
  nodeArgs: string[] = [],
) {
  const child = spawn(
    process.execPath,
    [...nodeArgs, '-r', '@swc-node/register', join(ROOT, script)],
    {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  child.stderr?.on('data', (chunk: Buffer) => log(`[billing-ledger] ${chunk.toString().trim()}`));
  return child;
}

/** Runs an app command to its end; answers its exit status and what it printed. */
function outputWithStatus(
  script: string,
  env: Record<string, string>,
): Promise<{ status: number | null; stdout: string }> {
  const child = spawn(process.execPath, ['-r', '@swc-node/register', join(ROOT, script)], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout }));
  });
}

/** What an app command printed; it must exit with status 0. */
async function output(script: string, env: Record<string, string>): Promise<string> {
  const { status, stdout } = await outputWithStatus(script, env);
  if (status !== 0) throw new Error(`${script} exited with ${status}`);
  return stdout;
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

export async function runLedgerBenchmark(options: LedgerBenchOptions = {}): Promise<string> {
  const accounts = options.accounts ?? 10_000;
  const producers = options.producers ?? 8;
  const seconds = options.seconds ?? 60;
  const duplicateShare = options.duplicateShare ?? 0.01;
  const capacitySeconds = options.capacitySeconds ?? 20;
  const ledgers = options.ledgers ?? 1;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));

  const db = await createTestDatabase({ prefix: 'bench_ledger' });
  const prefix = uniqueNatsPrefix();
  const ns = new NatsNamespace(prefix);
  const natsUrl = testNatsUrl();
  const nc = await connect({ servers: natsUrl, name: 'bench-ledger' });
  const pg = new Client({ connectionString: db.url });
  /** The billing-ledger processes, replica i applying partition i of `ledgers`. */
  let apps: ChildProcess[] = [];
  try {
    const migrate = node('apps/billing-ledger/src/migrate.ts', { DATABASE_URL: db.url }, log);
    const code = await new Promise<number | null>((r) => migrate.on('exit', r));
    if (code !== 0) throw new Error(`migrations failed (${code})`);
    await provisionMessaging(await jetstreamManager(nc), prefix, {
      streams: [Streams.BILLING],
      consumers: ledgerUsageConsumersOf(),
      buckets: [KvBuckets.balanceState, KvBuckets.revokedCredentials],
    });
    await pg.connect();
    const database = (await pg.query<{ db: string }>('SELECT current_database() AS db')).rows[0]!
      .db;

    const httpPorts: number[] = [];
    for (let i = 0; i < ledgers; i++) httpPorts.push(await freePort());
    const grpcPorts: number[] = [];
    for (let i = 0; i < ledgers; i++) grpcPorts.push(await freePort());
    const base = `http://127.0.0.1:${httpPorts[0]}`;
    const spawnLedgers = () =>
      httpPorts.map((httpPort, i) =>
        node(
          'apps/billing-ledger/src/main.ts',
          {
            DATABASE_URL: db.url,
            NATS_URL: natsUrl,
            NATS_PREFIX: prefix,
            HTTP_HOST: '127.0.0.1',
            HTTP_PORT: String(httpPort),
            GRPC_PORT: String(grpcPorts[i]),
            OPERATOR_TOKEN,
            LOG_LEVEL: 'warn',
            LEDGER_PARTITION: `${i}/${ledgers}`,
            NODE_OPTIONS: process.env['LEDGER_BENCH_NODE_OPTIONS'] ?? LEDGER_NODE_OPTIONS,
          },
          log,
          // LEDGER_BENCH_PROFILE=<dir>: a CPU profile of billing-ledger, written when it stops.
          process.env['LEDGER_BENCH_PROFILE']
            ? ['--cpu-prof', '--cpu-prof-dir', process.env['LEDGER_BENCH_PROFILE']]
            : [],
        ),
      );
    const ledgerReady = () =>
      Promise.all(
        httpPorts.map((port) =>
          waitFor(
            'billing-ledger /readyz',
            async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).ok,
            120_000,
          ),
        ),
      );
    /** CPU seconds of every ledger process. */
    const ledgerCpu = () => apps.reduce((sum, child) => sum + cpuSeconds(child.pid), 0);
    apps = spawnLedgers();
    await ledgerReady();

    // 1. Accounts through the operator bulk API (500 per request), two requests at a time.
    const accountStart = Date.now();
    const ids: string[] = new Array(accounts);
    const chunks = Array.from({ length: Math.ceil(accounts / BULK) }, (_, c) => c * BULK);
    await pool(chunks, 2, async (first) => {
      const count = Math.min(BULK, accounts - first);
      const response = await fetch(`${base}/api/v1/admin/accounts/bulk`, {
        method: 'POST',
        headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, 'content-type': 'application/json' },
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

    // 2. The lag watcher: for sampled accounts, each flush's usage is pending with the moment
    //    its window ended; a balance state in KV showing at least that much usage settles it.
    const expected = new Map<string, number>();
    const sampled = new Set(ids.filter((_, i) => i % LAG_SAMPLE === 0));
    const pendingLag = new Map<string, Array<{ cumulative: number; meteredAt: number }>>();
    const lags: number[] = [];
    /** When each watched window ended (its lag is in `lags` at the same index). */
    const lagWindows: number[] = [];
    // What a gateway sees: the puts into the balance-state KV bucket (a charge that flips
    // nothing is no event since ADR 0104's fleet changes; the bucket has every state). Only the
    // sampled accounts' keys are subscribed: a gateway watching the whole bucket runs on another
    // machine, and here its 10,000 messages a second would take NATS and this process's CPU
    // from the two cores the ledger is measured on.
    const watch = (_error: unknown, msg: Msg) => {
      const accountId = msg.subject.slice(msg.subject.lastIndexOf('.') + 1);
      const waiting = pendingLag.get(accountId);
      if (waiting === undefined || waiting.length === 0) return;
      const state = msg.json<BalanceStateChanged>();
      const used = PLAN_ALLOWANCE - state.allowanceCu;
      const seenAt = Date.now();
      while (waiting.length > 0 && waiting[0]!.cumulative <= used) {
        const { meteredAt } = waiting.shift()!;
        lags.push(seenAt - meteredAt);
        lagWindows.push(meteredAt);
      }
    };
    const watchLags = async () => {
      const subs = [...sampled].map((id) =>
        nc.subscribe(`$KV.${ns.bucket(KvBuckets.balanceState.name)}.${id}`, { callback: watch }),
      );
      await nc.flush();
      /** Waits for the last watched windows (up to a minute), stops watching; the ones unseen. */
      return async () => {
        await waitFor(
          'final balance states',
          async () => [...pendingLag.values()].every((w) => w.length === 0),
          60_000,
        ).catch(() => undefined);
        for (const sub of subs) sub.unsubscribe();
        return [...pendingLag.values()].reduce((sum, w) => sum + w.splice(0).length, 0);
      };
    };
    const stopWatchingSteady = await watchLags();

    // 3. The producers: real UsageMeter + UsageFlusher, one per producer, ticking each second
    //    (staggered), every account active on every producer every second.
    const js = jetstream(nc);
    const published: UsageFlushedV2[] = [];
    let publishFailures = 0;
    const publisher = {
      // The producers publish compact parts (USAGE_FLUSH_VERSION's default).
      publish: async (_contract: unknown, sent: UsageFlushedV2 | UsageFlushed) => {
        if (!('usage' in sent)) throw new Error('the bench publishes compact parts only');
        const part = sent;
        await js.publish(ns.subject(Events.usageFlushedV2.subjectOf(part)), JSON.stringify(part), {
          msgID: part.id,
          timeout: 30_000,
        });
        published.push(part);
      },
    };
    /**
     * `windows` fleet seconds from every producer. Paced: a flush each second on the wall clock
     * (the lag is watched). Not paced: a backlog, each producer's windows a second apart on a
     * clock of its own, published as fast as it goes. Answers the account-items produced.
     */
    const produce = async (windows: number, paced: boolean): Promise<number> => {
      const startedAt = Date.now();
      let items = 0;
      await Promise.all(
        Array.from({ length: producers }, async (_, p) => {
          const meter = new UsageMeter();
          let clock = startedAt;
          const flusher = new UsageFlusher(publisher, {
            producerId: `bench-gw-${p}${paced ? '' : '-backlog'}`,
            intervalMs: 1_000,
            now: paced ? () => new Date() : () => new Date(clock),
            drain: () => {
              const entries = meter.drain();
              const meteredAt = Date.now();
              for (const entry of entries) {
                const cumulative = (expected.get(entry.accountId) ?? 0) + entry.totalCu;
                expected.set(entry.accountId, cumulative);
                if (paced && sampled.has(entry.accountId)) {
                  let waiting = pendingLag.get(entry.accountId);
                  if (!waiting) pendingLag.set(entry.accountId, (waiting = []));
                  waiting.push({ cumulative, meteredAt });
                }
              }
              items += entries.length;
              return entries;
            },
            onPublished: (outcome) => {
              if (outcome === 'failed') publishFailures += 1;
            },
          });
          if (paced) await new Promise((r) => setTimeout(r, (p * 1_000) / producers));
          for (let w = 0; w < windows; w++) {
            const tickAt = startedAt + (p * 1_000) / producers + (w + 1) * 1_000;
            for (let a = 0; a < accounts; a++) {
              const pick = MIX[(a + p + w) % MIX.length]!;
              const calls = 1 + ((a * 7 + w) % 5);
              meter.add(
                ids[a]!,
                pick.network,
                pick.method,
                calls * cuForCall(pick.network, pick.method),
                calls,
              );
            }
            if (paced) await new Promise((r) => setTimeout(r, Math.max(0, tickAt - Date.now())));
            else clock += 1_000;
            await flusher.flush();
          }
          await flusher.stop();
        }),
      );
      return items;
    };
    /** What the ledger's usage rows take on disk, indexes included (journals, entries, part ids). */
    const ledgerBytes = async () =>
      Number(
        (
          await pg.query<{ b: string }>(
            `SELECT (SELECT sum(pg_total_relation_size(relid)) FROM pg_partition_tree('billing.usage_journal'))
                  + (SELECT sum(pg_total_relation_size(relid)) FROM pg_partition_tree('billing.usage_entries'))
                  + pg_total_relation_size('billing.usage_flushes') AS b`,
          )
        ).rows[0]!.b,
      );
    const bytesStart = await ledgerBytes();
    const cpuStart = ledgerCpu();
    const natsPid = natsServerPid();
    const natsCpuStart = cpuSeconds(natsPid);
    const benchCpuStart = process.cpuUsage();
    const pgCpuStart = await backendCpu(pg, database);
    const runStart = Date.now();
    const accountItems = await produce(seconds, true);
    const steadyParts = published.length;
    const publishSeconds = (Date.now() - runStart) / 1000;
    // Redeliveries: the same parts under new message ids (the stream keeps them; the ledger must not).
    const duplicates = published.filter((_, i) => i % Math.round(1 / duplicateShare) === 0);
    await pool(duplicates, 16, async (part) => {
      await js.publish(ns.subject(Events.usageFlushedV2.subjectOf(part)), JSON.stringify(part), {
        msgID: `${part.id}#again`,
      });
    });
    log(
      `published ${published.length} parts (${accountItems} account-items, +${duplicates.length} duplicate parts) in ${publishSeconds.toFixed(1)} s`,
    );

    const jsm = await jetstreamManager(nc);
    /** The usage durables of every partition, summed. */
    const usageConsumer = async () => {
      const total = {
        num_pending: 0,
        num_ack_pending: 0,
        num_waiting: 0,
        num_redelivered: 0,
        delivered: 0,
      };
      for (const { durable } of ledgerUsageConsumersOf()) {
        const info = await jsm.consumers.info(ns.stream('BILLING'), ns.consumer(durable));
        total.num_pending += info.num_pending;
        total.num_ack_pending += info.num_ack_pending;
        total.num_waiting += info.num_waiting;
        total.num_redelivered += info.num_redelivered;
        total.delivered += info.delivered.stream_seq;
      }
      return total;
    };
    const drained = () =>
      waitFor(
        'usage drained',
        async () => {
          const info = await usageConsumer();
          return info.num_pending === 0 && info.num_ack_pending === 0;
        },
        60 * 60_000,
      );
    await drained();
    const drainedAt = Date.now();
    const appCpu = ledgerCpu() - cpuStart;
    const natsCpu = cpuSeconds(natsPid) - natsCpuStart;
    const benchCpuUsed = process.cpuUsage(benchCpuStart);
    const benchCpu = (benchCpuUsed.user + benchCpuUsed.system) / 1e6;
    const pgCpuEnd = await backendCpu(pg, database);
    let pgCpu = 0;
    for (const [pid, end] of pgCpuEnd) pgCpu += end - (pgCpuStart.get(pid) ?? 0);
    const unsettled = await stopWatchingSteady();
    const steadyLags = lags.splice(0).sort((a, b) => a - b);
    lagWindows.length = 0;
    const applySeconds = (drainedAt - runStart) / 1000;
    const bytesPerItem = ((await ledgerBytes()) - bytesStart) / accountItems;

    // 4. Capacity: the steady run is bound by the production rate (a ledger that keeps up
    //    applies what is offered), so the ledger is stopped, `capacitySeconds` fleet seconds are
    //    published as a backlog, and the ledger is started again: first part delivered → drained
    //    is what it can apply, with journals of a behind ledger's batches (ADR 0104).
    const steadyJournals = Number(
      (await pg.query<{ m: string }>('SELECT coalesce(max(id), 0) AS m FROM billing.usage_journal'))
        .rows[0]!.m,
    );
    await Promise.all(apps.map((child) => stopProcess(child)));
    // No pull request of the stopped ledger left on the server: the whole backlog goes to the
    // restarted one (a part handed to a gone client would only come back after the ack wait).
    await waitFor(
      'no pull request of the stopped ledger',
      async () => (await usageConsumer()).num_waiting === 0,
      60_000,
    );
    const backlogStart = Date.now();
    const backlogItems = await produce(capacitySeconds, false);
    log(
      `published a backlog of ${backlogItems} account-items in ${((Date.now() - backlogStart) / 1000).toFixed(1)} s`,
    );
    const before = await usageConsumer();
    const deliveredBefore = before.delivered;
    apps = spawnLedgers();
    await waitFor(
      'first backlog delivery',
      async () => (await usageConsumer()).delivered > deliveredBefore,
      120_000,
    );
    const capacityStart = Date.now();
    const capacityCpuStart = ledgerCpu();
    const capacityPgStart = await backendCpu(pg, database);
    await drained();
    const capacityRedelivered = (await usageConsumer()).num_redelivered - before.num_redelivered;
    const capacityWall = (Date.now() - capacityStart) / 1000;
    const capacityCpu = ledgerCpu() - capacityCpuStart;
    let capacityPgCpu = 0;
    for (const [pid, end] of await backendCpu(pg, database))
      capacityPgCpu += end - (capacityPgStart.get(pid) ?? 0);
    await ledgerReady();
    const readyAt = Date.now();
    const capacityJournals = Number(
      (await pg.query<{ m: string }>('SELECT coalesce(max(id), 0) AS m FROM billing.usage_journal'))
        .rows[0]!.m,
    );

    // 5. The retention's DDL under load (ADR 0104 "Storage"): a paced run of DDL_SECONDS at the
    //    same shape, and the app's own command started in it, as the ledger's hourly run: the
    //    last of the days made ahead is made again (its partitions dropped here first, empty),
    //    and a day past the retention, made here, is dropped. Both take the usage tables' lock.
    //    The days are empty, so the locks are what is measured (a full day's files are unlinked
    //    in step 8, unloaded). A run of its own: the command's start (a process loading the app's
    //    modules on these two cores) is the bench's, not the ledger's, and stays out of the
    //    steady run's figures.
    const suffixOf = (day: number) =>
      `p${new Date(day).toISOString().slice(0, 10).replaceAll('-', '')}`;
    const aheadSuffix = suffixOf((Math.floor(Date.now() / DAY) + 2) * DAY);
    const expiredDay = (Math.floor(Date.now() / DAY) - 40) * DAY;
    const expiredSuffix = suffixOf(expiredDay);
    // After the restarted ledger's own first hourly run (at its first tick, a second after it
    // started), which would otherwise make and drop these days itself.
    await new Promise((r) => setTimeout(r, Math.max(0, readyAt + 3_000 - Date.now())));
    await pg.query(
      `DROP TABLE billing.usage_entries_${aheadSuffix}, billing.usage_journal_${aheadSuffix}`,
    );
    for (const table of ['usage_journal', 'usage_entries'])
      await pg.query(
        `CREATE TABLE billing.${table}_${expiredSuffix} PARTITION OF billing.${table}
           FOR VALUES FROM ('${new Date(expiredDay).toISOString()}') TO ('${new Date(expiredDay + DAY).toISOString()}')`,
      );
    const stopWatchingDdl = await watchLags();
    const retiring = (async () => {
      await new Promise((r) => setTimeout(r, DDL_START_SECONDS * 1_000));
      const from = Date.now();
      const result = JSON.parse(
        await output('apps/billing-ledger/src/retire-usage-journals.ts', {
          DATABASE_URL: db.url,
          USAGE_JOURNAL_RETENTION_DAYS: '35',
        }),
      ) as { made: string[]; madeMs: number; dropped: string[]; heldMs: number };
      return { ...result, from, to: Date.now() };
    })().then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
    await produce(DDL_SECONDS, true);
    const ran = await retiring;
    if ('error' in ran) throw ran.error;
    const underLoad = ran.value;
    await drained();
    await stopWatchingDdl();
    /** A partition's two tables still there (the ledger's own hourly run may have made or dropped them first, when the run spans an hour's start). */
    const tablesOf = async (suffix: string) =>
      Number(
        (
          await pg.query<{ n: string }>(
            `SELECT count(*) AS n FROM pg_class WHERE relname = ANY($1)`,
            [[`usage_journal_${suffix}`, `usage_entries_${suffix}`]],
          )
        ).rows[0]!.n,
      );
    const expiredLeft = await tablesOf(expiredSuffix);
    const aheadThere = await tablesOf(aheadSuffix);
    // Windows that ended while the command ran (its start included) or in the second after.
    const ddlLags = [...lags].sort((a, b) => a - b);
    const duringDdl = lags
      .filter((_, i) => lagWindows[i]! >= underLoad.from && lagWindows[i]! <= underLoad.to + 1_000)
      .sort((a, b) => a - b);

    // 6. Verify every account to the CU: ledger entries, the KV bucket, the ledger's invariants.
    //    The backlog's last balance states go out after its last commit: read until they match
    //    (up to a minute), then count what still does not.
    const kv = await new Kvm(nc).open(ns.bucket(KvBuckets.balanceState.name));
    const kvCheck = async (): Promise<number> => {
      let mismatches = 0;
      await pool(ids, 64, async (id) => {
        const state = (await kv.get(id))?.json<BalanceStateChanged>();
        if (
          !state ||
          state.allowanceCu + state.purchasedCu !== PLAN_ALLOWANCE - (expected.get(id) ?? 0)
        )
          mismatches += 1;
      });
      return mismatches;
    };
    await waitFor(
      'balance states of the backlog',
      async () => (await kvCheck()) === 0,
      60_000,
    ).catch(() => undefined);
    const kvMismatches = await kvCheck();
    /** Accounts whose CU in the answer of `sql` is not what was published for them. */
    const mismatchesOf = async (sql: string): Promise<number> => {
      const rows = (await pg.query<{ account_id: string; cu: string }>(sql)).rows;
      let n = accounts - rows.length;
      for (const row of rows) if (Number(row.cu) !== expected.get(row.account_id)) n += 1;
      return n;
    };
    const count = async (table: string): Promise<number> =>
      Number((await pg.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)).rows[0]!.n);
    const ledgerMismatches = await mismatchesOf(
      `SELECT account_id, sum(amount_cu) AS cu FROM billing.usage_entries WHERE ledger = 'usage' GROUP BY account_id`,
    );
    const counts = (
      await pg.query<{ journals: string; entries: string; parts: string }>(
        `SELECT (SELECT count(*) FROM billing.usage_journal) AS journals,
                (SELECT count(*) FROM billing.usage_entries) AS entries,
                (SELECT count(*) FROM billing.usage_flushes) AS parts`,
      )
    ).rows[0]!;
    const unbalanced = await pg.query(
      `SELECT journal_id FROM billing.entries GROUP BY journal_id HAVING sum(amount_cu) <> 0 LIMIT 1`,
    );
    // References (no foreign-key triggers on the ledger's rows, ADR 0104): proven here.
    const orphans = (
      await pg.query<{ n: string }>(
        `SELECT (SELECT count(*) FROM billing.entries e WHERE NOT EXISTS (SELECT 1 FROM billing.journals j WHERE j.id = e.journal_id))
              + (SELECT count(*) FROM billing.journals j WHERE NOT EXISTS (SELECT 1 FROM billing.accounts a WHERE a.id = j.account_id)) AS n`,
      )
    ).rows[0]!.n;
    const sums = await pg.query<{ n: string }>(
      `SELECT count(*) AS n FROM billing.balances b
         JOIN (SELECT account_id, coalesce(sum(amount_cu) FILTER (WHERE ledger = 'allowance'), 0) AS a,
                      coalesce(sum(amount_cu) FILTER (WHERE ledger = 'purchased'), 0) AS p
                 FROM billing.entries GROUP BY account_id) s ON s.account_id = b.account_id
        WHERE b.allowance_cu <> s.a OR b.purchased_cu <> s.p`,
    );

    // Hourly usage: what is folded plus what waits to be folded, per account.
    const hourlyMismatches = await mismatchesOf(
      `SELECT account_id, sum(cu) AS cu FROM (
         SELECT account_id, cu FROM billing.usage_hourly
         UNION ALL
         SELECT u.account_id, u.cu FROM billing.usage_hourly_pending p, unnest(p.account_ids::text[], p.cu::bigint[]) AS u(account_id, cu)
       ) x GROUP BY account_id`,
    );

    // 7. The raw ceiling, same run, same database: the usage journals and entries the ledger
    //    wrote, the same rows written again into copies of its tables by a bare multi-row insert
    //    loop, a ledger transaction's journals per statement; for the steady run and the backlog.
    await pg.query(`CREATE TABLE billing.raw_journal (LIKE billing.usage_journal INCLUDING ALL)`);
    await pg.query(`CREATE TABLE billing.raw_entries (LIKE billing.usage_entries INCLUDING ALL)`);
    const steadyRaw = await rawInsertSeconds(pg, 0, steadyJournals, accounts);
    const backlogRaw = await rawInsertSeconds(pg, steadyJournals, capacityJournals, accounts);
    const journals = steadyRaw.journals;
    const entries = steadyRaw.entries;
    const rawSeconds = steadyRaw.seconds;

    // 8. Retention (ADR 0104 "Storage"): the run's day retired as it will be once it is older
    //    than the retention, by the app's own command, with the ledger stopped; then the proof
    //    again (`check-ledger`: running sums, totals and usage from entries plus summaries).
    await Promise.all(apps.map((child) => stopProcess(child)));
    const usageEntries = await count('billing.usage_entries');
    const retired = JSON.parse(
      await output('apps/billing-ledger/src/retire-usage-journals.ts', {
        DATABASE_URL: db.url,
        USAGE_JOURNAL_RETENTION_DAYS: '35',
        RETIRE_AS_OF: new Date(Date.now() + 36 * DAY).toISOString(),
      }),
    ) as { dropped: string[]; deleted: number; seconds: number };
    const summaries = await count('billing.usage_summaries');
    const left = await count('billing.usage_entries');
    const retiredMismatches = await mismatchesOf(
      `SELECT account_id, sum(amount_cu) AS cu FROM billing.usage_summaries WHERE ledger = 'usage' GROUP BY account_id`,
    );
    const provenAfter = (
      await outputWithStatus('apps/billing-ledger/src/check-ledger.ts', { DATABASE_URL: db.url })
    ).status;
    const appliedRate = accountItems / applySeconds;
    const rawRate = accountItems / rawSeconds;
    const capacityRate = backlogItems / capacityWall;
    const backlogRawRate = backlogItems / backlogRaw.seconds;

    const droppedBy = underLoad.dropped.includes(expiredSuffix)
      ? 'the command'
      : "the ledger's run";
    const ok =
      kvMismatches === 0 &&
      ledgerMismatches === 0 &&
      hourlyMismatches === 0 &&
      publishFailures === 0 &&
      Number(counts.parts) === published.length &&
      unbalanced.rowCount === 0 &&
      Number(orphans) === 0 &&
      Number(sums.rows[0]!.n) === 0 &&
      left === 0 &&
      expiredLeft === 0 &&
      aheadThere === 2 &&
      retiredMismatches === 0 &&
      provenAfter === 0;
    const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
    const lines = [
      `| measure | value |`,
      `|---|---|`,
      `| shape | ${fmt(accounts)} accounts (plan ${PLAN}) × ${producers} producers, every account on every producer every second, ${seconds} s; ${ledgers === 1 ? 'one billing-ledger process' : `${ledgers} billing-ledger processes, one per ledger partition`} |`,
      `| published | ${fmt(accountItems)} account-items in ${fmt(steadyParts)} flush parts (+${fmt(duplicates.length)} parts re-published as redeliveries), over ${publishSeconds.toFixed(1)} s |`,
      `| **account-items applied / s** | **${fmt(appliedRate)}** (first flush → consumer drained: ${applySeconds.toFixed(1)} s) |`,
      `| raw ceiling (same journal + entry rows, bare multi-row INSERT loop, same run) | ${fmt(rawRate)} account-items / s (${fmt(journals)} journals + ${fmt(entries)} entries in ${rawSeconds.toFixed(1)} s); ledger = ${(appliedRate / rawRate).toFixed(2)}× |`,
      `| **capacity**: a backlog of ${capacitySeconds} fleet seconds applied by a restarted ledger, first delivery → drained | **${fmt(capacityRate)}** account-items / s (${fmt(backlogItems)} in ${capacityWall.toFixed(1)} s; ${fmt(backlogRaw.journals)} journals, ${(backlogItems / Math.max(1, backlogRaw.journals)).toFixed(1)} items each; ${capacityRedelivered} parts redelivered); billing-ledger ${((capacityCpu / backlogItems) * 1e6).toFixed(1)} µs + Postgres ${((capacityPgCpu / backlogItems) * 1e6).toFixed(1)} µs CPU per account-item |`,
      `| raw ceiling of the backlog's rows (same loop) | ${fmt(backlogRawRate)} account-items / s (${fmt(backlogRaw.journals)} journals + ${fmt(backlogRaw.entries)} entries in ${backlogRaw.seconds.toFixed(1)} s); capacity = ${(capacityRate / backlogRawRate).toFixed(2)}× |`,
      `| lag: window end → balance state in KV showing it (1 in ${LAG_SAMPLE} accounts), p50 / p99 / max | ${percentile(steadyLags, 50)} / ${percentile(steadyLags, 99)} / ${steadyLags.at(-1) ?? NaN} ms over ${fmt(steadyLags.length)} windows (${unsettled} never seen) |`,
      `| billing-ledger CPU | ${appCpu.toFixed(1)} s (${Math.round((appCpu / applySeconds) * 100)} % of one core; ${((appCpu / accountItems) * 1e6).toFixed(1)} µs per account-item) |`,
      `| Postgres CPU (backends of this database) | ${pgCpu.toFixed(1)} s (${Math.round((pgCpu / applySeconds) * 100)} % of one core) |`,
      `| NATS server CPU / this bench process (8 producers, lag watcher) | ${natsCpu.toFixed(1)} s / ${benchCpu.toFixed(1)} s |`,
      `| usage journals written | ${fmt(journals)} for ${fmt(accountItems)} account-items (one per account per transaction) |`,
      `| ledger storage, steady run (journals, entries, applied part ids; indexes included) | ${bytesPerItem.toFixed(0)} bytes per account-item: ${((bytesPerItem * appliedRate * 86_400) / 1e9).toFixed(0)} GB a day at this rate |`,
      `| retention's DDL under load: a paced run of ${DDL_SECONDS} s at the same shape, the app's command started ${DDL_START_SECONDS} s in (a day made ahead, an expired day dropped; empty, so the locks are measured) | ${underLoad.made.includes(aheadSuffix) ? `${aheadSuffix} made in ${underLoad.madeMs.toFixed(0)} ms` : `${aheadSuffix} made by the ledger's own run`}; ${expiredLeft === 0 ? `${expiredSuffix} dropped by ${droppedBy}` : `${expiredSuffix} NOT dropped`}, the usage tables held ${underLoad.heldMs.toFixed(0)} ms (lock asked → commit). Lag of the windows ending in the command's ${((underLoad.to - underLoad.from) / 1000).toFixed(1)} s (its start included) and the second after: p99 ${percentile(duringDdl, 99)}, max ${duringDdl.at(-1) ?? NaN} ms over ${fmt(duringDdl.length)}; of the whole run: p99 ${percentile(ddlLags, 99)}, max ${ddlLags.at(-1) ?? NaN} ms |`,
      `| retention: the run's day retired (summed per account and ledger, partitions dropped; ledger stopped) | ${fmt(usageEntries)} entries into ${fmt(summaries)} summary rows in ${retired.seconds.toFixed(1)} s (${fmt(usageEntries / retired.seconds)} entries / s; dropped ${retired.dropped.join(', ') || 'none'}, ${fmt(retired.deleted)} default-partition journals); ${fmt(left)} entries left |`,
      `| verification | ${ok ? 'PASS' : 'FAIL'}: KV mismatches ${kvMismatches}, ledger mismatches ${ledgerMismatches}, hourly usage mismatches ${hourlyMismatches}, parts applied ${counts.parts} of ${published.length}, publish failures ${publishFailures}, unbalanced journals ${unbalanced.rowCount}, orphaned entries or journals ${orphans}, running-sum mismatches ${sums.rows[0]!.n}; after retiring: usage mismatches ${retiredMismatches}, checkLedger ${provenAfter === 0 ? 'holds' : `fails (${provenAfter})`} |`,
      '',
      `ledger: ${fmt(appliedRate)} account-items/s applied, lag p99 ${percentile(steadyLags, 99)} ms, verification ${ok ? 'PASS' : 'FAIL'}`,
    ];
    return lines.join('\n');
  } finally {
    await Promise.all(apps.map((child) => stopProcess(child)));
    await pg.end().catch(() => undefined);
    await nc.close();
    await deleteNatsNamespace(natsUrl, prefix).catch(() => undefined);
    await db.drop().catch(() => undefined);
  }
}

/**
 * A bare loop writing the usage journals with ids in (`after`, `upTo`] and their entries again,
 * the same rows (keys, accounts, amounts, times), into copies of the ledger's tables (same
 * columns, indexes and unique key; no foreign keys), `batch` journals per transaction by
 * multi-row INSERT … SELECT unnest statements: what Postgres alone takes for the rows the ledger
 * wrote, without locks, balances, rollups, claims or NATS. Only the writes are timed.
 */
async function rawInsertSeconds(
  pg: Client,
  after: number,
  upTo: number,
  batch: number,
): Promise<{ seconds: number; journals: number; entries: number }> {
  let timed = 0;
  let journals = 0;
  let entries = 0;
  for (let last = after; ;) {
    const rows = (
      await pg.query<{
        id: string;
        idempotency_key: string;
        account_id: string;
        amount_cu: string;
        overdraft_cu: string;
        occurred_at: Date;
      }>(
        `SELECT id, idempotency_key, account_id, amount_cu, overdraft_cu, occurred_at FROM billing.usage_journal
          WHERE id > $1 AND id <= $2 ORDER BY id LIMIT $3`,
        [last, upTo, batch],
      )
    ).rows;
    if (rows.length === 0) break;
    last = Number(rows.at(-1)!.id);
    const postings = (
      await pg.query<{
        journal_id: string;
        account_id: string;
        ledger: string;
        amount_cu: string;
        occurred_at: Date;
      }>(
        `SELECT journal_id, account_id, ledger, amount_cu, occurred_at FROM billing.usage_entries
          WHERE journal_id = ANY($1::bigint[]) ORDER BY id`,
        [rows.map((r) => r.id)],
      )
    ).rows;
    const started = performance.now();
    await pg.query('BEGIN');
    const inserted = await pg.query<{ id: string; idempotency_key: string }>(
      `INSERT INTO billing.raw_journal (idempotency_key, account_id, kind, amount_cu, overdraft_cu, occurred_at, detail)
       SELECT k, a, 'usage', c, o, t, NULL FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::timestamptz[]) AS u(k, a, c, o, t)
       RETURNING id, idempotency_key`,
      [
        rows.map((r) => r.idempotency_key),
        rows.map((r) => r.account_id),
        rows.map((r) => r.amount_cu),
        rows.map((r) => r.overdraft_cu),
        rows.map((r) => r.occurred_at),
      ],
    );
    const newId = new Map(inserted.rows.map((r) => [r.idempotency_key, r.id]));
    const keyOf = new Map(rows.map((r) => [r.id, r.idempotency_key]));
    await pg.query(
      `INSERT INTO billing.raw_entries (journal_id, account_id, ledger, amount_cu, occurred_at)
       SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::timestamptz[])`,
      [
        postings.map((e) => newId.get(keyOf.get(e.journal_id)!)),
        postings.map((e) => e.account_id),
        postings.map((e) => e.ledger),
        postings.map((e) => e.amount_cu),
        postings.map((e) => e.occurred_at),
      ],
    );
    await pg.query('COMMIT');
    timed += performance.now() - started;
    journals += rows.length;
    entries += postings.length;
  }
  return { seconds: timed / 1000, journals, entries };
}

/** Entry point of `npm run bench [ledger]` (bench/run.ts). */
export function runBenchmark(): Promise<string> {
  return runLedgerBenchmark({
    accounts: Number(process.env['LEDGER_BENCH_ACCOUNTS'] ?? 10_000),
    producers: Number(process.env['LEDGER_BENCH_PRODUCERS'] ?? 8),
    seconds: Number(process.env['LEDGER_BENCH_SECONDS'] ?? 60),
    capacitySeconds: Number(process.env['LEDGER_BENCH_CAPACITY_SECONDS'] ?? 20),
    ledgers: Number(process.env['LEDGER_BENCH_LEDGERS'] ?? 1),
  });
}

import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Subjects } from '@meridian/contracts';
import { createAppDataSource, runMigrations } from '@meridian/platform-db';
import { NatsNamespace, provisionMessaging } from '@meridian/platform-messaging';
import {
  createTestDatabase,
  deleteNatsNamespace,
  freePort,
  runAppScript,
  startAnvil,
  startAppProcess,
  testNatsUrl,
  uniqueNatsPrefix,
  type AnvilInstance,
  type AppProcess,
  type TestDatabase,
} from '@meridian/testing';
import { normalizeFilter } from '@meridian/webhooks';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import type { DataSource } from 'typeorm';
import { dataSourceOptions, SCHEMA } from '../src/db/data-source';

/**
 * The real processes of the matcher's RSS and latency rows: webhook-matcher's `main.ts` and
 * chain-indexer's `main.ts` as children, on a test database holding 1,000 webhooks × 1,000
 * addresses (direct SQL fixtures, as the API's bulk list writes store them) and a NATS namespace
 * of their own, with an anvil devnet as the indexer's node.
 */
export const NETWORK = 'eth-mainnet';
export const DEPLOYER = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
/** The address the latency webhook (`wh_latency`, account BENCH_ACCOUNT) watches inline. */
export const WATCHED = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
export const BENCH_ACCOUNT = 'acc_bench';

export interface Child {
  readonly process: ChildProcess;
  readonly lines: string[];
  waitFor(text: string, timeoutMs: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * An app's `main` (relative to the repository root) as a child on 127.0.0.1, once it listens:
 * startAppProcess on a free HTTP port, started again on another when the port was taken first.
 * Its stdout lines are kept from the first; its stderr goes to this process's.
 */
async function startApp(
  main: string,
  env: Record<string, string>,
  extra: { nodeArgs?: string[]; stdin?: boolean } = {},
): Promise<Child> {
  const lines: string[] = [];
  let latest: ChildProcess | undefined;
  let stopping = false;
  const app: AppProcess = await startAppProcess(async () => {
    const port = await freePort();
    return {
      main,
      ...extra,
      env: { HTTP_HOST: '127.0.0.1', HTTP_PORT: String(port), ...env },
      healthUrl: `http://127.0.0.1:${port}/healthz`,
      // Listening only (the matcher loads its index afterwards; `waitFor` its line).
      startTimeoutMs: 120_000,
      pollMs: 50,
      // SIGTERM, as before (SIGKILL only after this long): a large index takes its time to stop.
      stopGraceMs: 120_000,
      onSpawn: (child) => {
        latest = child;
        lines.length = 0;
        child.stderr!.pipe(process.stderr);
        createInterface({ input: child.stdout! }).on('line', (line) => {
          if (child === latest) lines.push(line);
        });
      },
    };
  });
  void app.exited().then(({ code, signal }) => {
    if (!stopping)
      process.stderr.write(
        `${main} exited (${code ?? signal}); last lines:\n${lines.slice(-20).join('\n')}\n`,
      );
  });
  return {
    process: app.child,
    lines,
    async waitFor(text, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (!lines.some((l) => l.includes(text))) {
        if (!app.running()) throw new Error(`${main} exited (${app.child.exitCode})`);
        if (Date.now() > deadline)
          throw new Error(
            `timed out waiting for "${text}"; last lines: ${lines.slice(-5).join('\n')}`,
          );
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async stop() {
      stopping = true;
      await app.stop();
    },
  };
}

/** VmRSS / VmHWM of a process, in MiB (kernel figures, load-independent). */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)![1]);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

export async function rpc<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

/** `al_` + 24 base32 letters, the decimal digits of `w` spelt a–j (as the SQL above makes them). */
const listIdOf = (w: number) =>
  `al_${[...String(w).padStart(24, '0')].map((d) => 'abcdefghij'[Number(d)]).join('')}`;

/**
 * 1,000 address lists of 1,000 distinct addresses (made in SQL from md5, as random as the
 * bench's generated ones), each referenced by one active webhook on 300 accounts, plus the
 * latency webhook watching one address inline (unconfirmed phase only) with a large budget.
 */
export async function loadFixtures(
  ds: DataSource,
  webhooks: number,
  perList: number,
): Promise<void> {
  await ds.query(
    `INSERT INTO webhooks.address_lists (id, account_id, name, entry_count, created_at, updated_at)
     SELECT 'al_' || translate(lpad(w::text, 24, '0'), '0123456789', 'abcdefghij'), 'acc_' || (w % 300), 'bench ' || w, $2::int, now(), now()
       FROM generate_series(0, $1::int - 1) AS w`,
    [webhooks, perList],
  );
  await ds.query(
    `INSERT INTO webhooks.address_list_entries (list_id, address)
     SELECT 'al_' || translate(lpad((i / $2::int)::text, 24, '0'), '0123456789', 'abcdefghij'),
            '0x' || md5('a' || i) || substr(md5('b' || i), 1, 8)
       FROM generate_series(0, $1::int * $2::int - 1) AS i`,
    [webhooks, perList],
  );
  const insert = async (
    id: string,
    accountId: string,
    body: { addresses?: string[]; list_refs?: string[] },
    phases: string[],
  ) => {
    const filter = normalizeFilter({ ...body, trigger_type: 'address_activity' });
    await ds.query(
      `INSERT INTO webhooks.webhooks (id, account_id, status, chain, network, trigger_type,
         filters, addresses, list_refs, filter_tree, inline_address_count, confirm_depth, phases,
         target_url, secret_sealed, created_at, updated_at)
       VALUES ($1, $2, 'active', 'ethereum', $3, 'address_activity', NULL, $4, $5, $6, $7, 12, $8,
         'https://hooks.example.org/in', 'sealed', now(), now())`,
      [
        id,
        accountId,
        NETWORK,
        filter.addresses,
        filter.listRefs,
        JSON.stringify(filter.tree),
        filter.inlineAddresses,
        phases,
      ],
    );
  };
  for (let w = 0; w < webhooks; w++)
    await insert(`wh_bench_${w}`, `acc_${w % 300}`, { list_refs: [listIdOf(w)] }, [
      'unconfirmed',
      'confirmed',
    ]);
  await insert('wh_latency', BENCH_ACCOUNT, { addresses: [WATCHED] }, ['unconfirmed']);
  await ds.query(`INSERT INTO webhooks.accounts (account_id, caps) VALUES ($1, $2)`, [
    BENCH_ACCOUNT,
    JSON.stringify({ eventsPerSecond: 100_000, eventsBurst: 1_200_000 }),
  ]);
}

export interface AppFigures {
  addresses: number;
  webhooks: number;
  loadMs: number;
  /** MiB: the app with an empty index after GC; with the 1M index after load, after GC; peak. */
  emptyRss: number;
  loadedRss: number;
  gcRss: number;
  peakRss: number;
  latency: { p50: number; p99: number; max: number; n: number; lost: number };
}

/**
 * Starts webhook-matcher's main.ts (with a bench-only preload: a line on stdin runs gc()), once
 * it listens.
 */
export function startMatcherApp(db: TestDatabase, prefix: string): Promise<Child> {
  return startApp(
    'apps/webhook-matcher/src/main.ts',
    {
      DATABASE_URL: db.url,
      NATS_URL: testNatsUrl(),
      NATS_PREFIX: prefix,
      WEBHOOK_SECRETS_KEY: randomBytes(32).toString('base64'),
      BILLING_GRPC_URL: '127.0.0.1:1',
      LOG_LEVEL: 'info',
    },
    { nodeArgs: ['--expose-gc', '-r', join(__dirname, 'gc-on-stdin.ts')], stdin: true },
  );
}

/** Asks the app for two full GCs and reads its RSS once they are done. */
async function rssAfterGc(app: Child): Promise<number> {
  const before = app.lines.filter((l) => l.includes('bench gc done')).length;
  app.process.stdin!.write('gc\n');
  const deadline = Date.now() + 30_000;
  while (app.lines.filter((l) => l.includes('bench gc done')).length === before) {
    if (Date.now() > deadline) throw new Error('no gc answer from the matcher app');
    await new Promise((r) => setTimeout(r, 50));
  }
  return memoryOf(app.process.pid!).rss;
}

export async function measureAppProcess(
  webhooks: number,
  perList: number,
  samples: number,
): Promise<AppFigures> {
  const { db, prefix, nc, ds, dispose } = await prepareBenchDatabase();
  let anvil: AnvilInstance | undefined;
  const children: Child[] = [];
  try {
    // The app with nothing to index: what the process costs without the index.
    const empty = await startMatcherApp(db, prefix);
    children.push(empty);
    await empty.waitFor('match index loaded', 120_000);
    const emptyRss = await rssAfterGc(empty);
    await empty.stop();

    await loadFixtures(ds, webhooks, perList);
    const started = performance.now();
    const app = await startMatcherApp(db, prefix);
    children.push(app);
    await app.waitFor('match index loaded', 600_000);
    const loadMs = performance.now() - started;
    const loadedLine = JSON.parse(app.lines.find((l) => l.includes('match index loaded'))!) as {
      addresses: number;
      webhooks: number;
    };
    const loadedRss = memoryOf(app.process.pid!).rss;
    const gcRss = await rssAfterGc(app);

    anvil = await startAnvil({ chainId: 1 });
    await rpc(anvil.url, 'evm_setAutomine', [false]);
    children.push(await startIndexer(db, prefix, anvil.url));
    const latency = await measureLatency(anvil.url, nc, prefix, samples);
    const peakRss = memoryOf(app.process.pid!).peak;
    return {
      addresses: loadedLine.addresses,
      webhooks: loadedLine.webhooks,
      loadMs,
      emptyRss,
      loadedRss,
      gcRss,
      peakRss,
      latency,
    };
  } finally {
    for (const child of children.reverse()) await child.stop();
    await anvil?.stop();
    await dispose();
  }
}

/**
 * A test database with the matcher's and chain-indexer's schemas migrated, and a provisioned
 * NATS namespace of its own; `dispose` drops both.
 */
export async function prepareBenchDatabase(): Promise<{
  db: TestDatabase;
  prefix: string;
  nc: Awaited<ReturnType<typeof connect>>;
  ds: DataSource;
  dispose(): Promise<void>;
}> {
  const db = await createTestDatabase({ prefix: 'wh_bench' });
  const prefix = uniqueNatsPrefix();
  const nc = await connect({ servers: testNatsUrl() });
  await provisionMessaging(await jetstreamManager(nc), prefix);
  const ds = createAppDataSource(dataSourceOptions(db.url));
  await ds.initialize();
  const dispose = async () => {
    await ds.destroy();
    await nc.close();
    await deleteNatsNamespace(testNatsUrl(), prefix);
    await db.drop();
  };
  try {
    await runMigrations(ds, SCHEMA);
    await runAppScript('apps/chain-indexer/src/migrate.ts', { DATABASE_URL: db.url });
  } catch (error) {
    await dispose();
    throw error;
  }
  return { db, prefix, nc, ds, dispose };
}

/** chain-indexer's main.ts on the devnet at `anvilUrl`, once it has subscribed to newHeads. */
export async function startIndexer(
  db: TestDatabase,
  prefix: string,
  anvilUrl: string,
): Promise<Child> {
  const indexer = await startApp('apps/chain-indexer/src/main.ts', {
    DATABASE_URL: db.url,
    NATS_URL: testNatsUrl(),
    NATS_PREFIX: prefix,
    LOG_LEVEL: 'info',
    POLL_INTERVAL_MS: '200',
    LEASE_TTL_MS: '3000',
    NETWORKS: NETWORK,
    UPSTREAMS: JSON.stringify({ [NETWORK]: [anvilUrl] }),
  });
  await indexer.waitFor('newHeads subscribed', 120_000);
  return indexer;
}

/**
 * Block on the devnet → delivery job on WEBHOOK through the real chain-indexer and the real
 * matcher app: per sample one pending transfer to the watched address, `evm_mine`, and the
 * clock starts when evm_mine returned (the block exists); it stops when the job of that block
 * arrives on the job subject. Ten warm-up blocks first; a block whose job does not come within
 * 10 s counts as lost (and is not a sample).
 */
async function measureLatency(
  anvilUrl: string,
  nc: Awaited<ReturnType<typeof connect>>,
  prefix: string,
  samples: number,
): Promise<AppFigures['latency']> {
  const arrived = new Map<string, number>();
  const sub = nc.subscribe(
    new NatsNamespace(prefix).subject(Subjects.webhook.deliveryJob.of(BENCH_ACCOUNT)),
    {
      callback: (_e, m) => {
        const job = m.json<{ payload: { block: { number: string } } }>();
        arrived.set(job.payload.block.number, performance.now());
      },
    },
  );
  const out: number[] = [];
  let lost = 0;
  let head = Number.parseInt(await rpc<string>(anvilUrl, 'eth_blockNumber'), 16);
  for (let i = 0; i < samples + 10; i++) {
    await rpc(anvilUrl, 'eth_sendTransaction', [{ from: DEPLOYER, to: WATCHED, value: '0x1' }]);
    await rpc(anvilUrl, 'evm_mine');
    const t0 = performance.now();
    head += 1;
    const key = `0x${head.toString(16)}`;
    const deadline = t0 + 10_000;
    while (!arrived.has(key) && performance.now() < deadline)
      await new Promise((r) => setTimeout(r, 1));
    if (i < 10) continue;
    if (arrived.has(key)) out.push(arrived.get(key)! - t0);
    else lost += 1;
  }
  sub.unsubscribe();
  out.sort((a, b) => a - b);
  const q = (p: number) => out[Math.min(out.length - 1, Math.ceil(p * out.length) - 1)]!;
  return { p50: q(0.5), p99: q(0.99), max: out.at(-1)!, n: out.length, lost };
}

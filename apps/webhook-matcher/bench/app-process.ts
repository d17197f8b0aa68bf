import { spawn, type ChildProcess } from 'node:child_process';
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
  startAnvil,
  testNatsUrl,
  uniqueNatsPrefix,
  type AnvilInstance,
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
const ROOT = join(__dirname, '../../..');
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

export function startChild(args: string[], env: Record<string, string>, stdin = false): Child {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: [stdin ? 'pipe' : 'ignore', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => lines.push(line));
  let stopping = false;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      if (!stopping)
        process.stderr.write(
          `${args.at(-1)} exited (${code ?? signal}); last lines:\n${lines.slice(-20).join('\n')}\n`,
        );
      resolve();
    }),
  );
  return {
    process: child,
    lines,
    async waitFor(text, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (!lines.some((l) => l.includes(text))) {
        if (child.exitCode !== null) throw new Error(`${args.at(-1)} exited (${child.exitCode})`);
        if (Date.now() > deadline)
          throw new Error(
            `timed out waiting for "${text}"; last lines: ${lines.slice(-5).join('\n')}`,
          );
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async stop() {
      stopping = true;
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
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

/** Starts webhook-matcher's main.ts (with a bench-only preload: a line on stdin runs gc()). */
export function startMatcherApp(db: TestDatabase, prefix: string, port: number): Child {
  return startChild(
    [
      '--expose-gc',
      '-r',
      '@swc-node/register',
      '-r',
      join(__dirname, 'gc-on-stdin.ts'),
      join(ROOT, 'apps/webhook-matcher/src/main.ts'),
    ],
    {
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: String(port),
      DATABASE_URL: db.url,
      NATS_URL: testNatsUrl(),
      NATS_PREFIX: prefix,
      WEBHOOK_SECRETS_KEY: randomBytes(32).toString('base64'),
      BILLING_GRPC_URL: '127.0.0.1:1',
      LOG_LEVEL: 'info',
    },
    true,
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
    const empty = startMatcherApp(db, prefix, await freePort());
    children.push(empty);
    await empty.waitFor('match index loaded', 120_000);
    const emptyRss = await rssAfterGc(empty);
    await empty.stop();

    await loadFixtures(ds, webhooks, perList);
    const app = startMatcherApp(db, prefix, await freePort());
    children.push(app);
    const started = performance.now();
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
    const migrate = startChild(['-r', '@swc-node/register', 'apps/chain-indexer/src/migrate.ts'], {
      DATABASE_URL: db.url,
    });
    await migrate.waitFor('migration', 120_000);
    await migrate.stop();
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
  const indexer = startChild(
    ['-r', '@swc-node/register', join(ROOT, 'apps/chain-indexer/src/main.ts')],
    {
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: String(await freePort()),
      DATABASE_URL: db.url,
      NATS_URL: testNatsUrl(),
      NATS_PREFIX: prefix,
      LOG_LEVEL: 'info',
      POLL_INTERVAL_MS: '200',
      LEASE_TTL_MS: '3000',
      NETWORKS: NETWORK,
      UPSTREAMS: JSON.stringify({ [NETWORK]: [anvilUrl] }),
    },
  );
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

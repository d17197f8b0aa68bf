import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  Consumers,
  deliveryJobsConsumers,
  deliveryRouteOf,
  Events,
  KvBuckets,
  Streams,
  deliveryJobId,
  type DeliveryJob,
  type WebhookStatusEntry,
} from '@meridian/contracts';
import {
  JetStreamPublisher,
  NatsClient,
  NatsNamespace,
  provisionMessaging,
} from '@meridian/platform-messaging';
import {
  deployedNodeOptions,
  createTestDatabase,
  deleteNatsNamespace,
  freePort,
  testNatsUrl,
  uniqueNatsPrefix,
} from '@meridian/testing';
import { sealSecret } from '@meridian/platform-secrets';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { Agent, request } from 'undici';
import type { ReceiverReport } from './receiver';

const ROOT = resolve(__dirname, '../..');
/** Destination hosts (127.0.0.2…): one customer endpoint each, so the 200 req/s per host and
 * 10 in flight per URL of the worker bind no more than they would across real customers. */
export const HOSTS = 32;
/** The worker's consumer runs 256 handlers at once (Consumers.workerDeliveryJobs.concurrency). */
export const CONCURRENCY = Consumers.workerDeliveryJobs.concurrency ?? 256;

export interface Rate {
  /** Requests per second the receiver saw between the 10th and the 90th percentile arrival. */
  perSecond: number;
  count: number;
  distinctIds: number;
  unsigned: number;
  /** CPU of the sending side (bare loop: this process; worker: its process) per request. */
  cpuMsPerRequest: number;
  /**
   * Warm worker rounds only: the (first) worker's event-loop utilisation over the drain (near
   * 1: its thread is the bound, not what it waits for), and the CPU per request of what it
   * talks to, from /proc: every `postgres` and `nats-server` process, the receiver.
   */
  during?: { eventLoopUtilization: number; postgresMs: number; natsMs: number; receiverMs: number };
}

export interface ThroughputResult {
  jobs: number;
  /** Interleaved rounds: bare loop, then the warm worker draining a queue of `jobs` jobs. */
  rounds: { bare: Rate; worker: Rate }[];
  /** Medians over the rounds (rate and CPU per request each on its own). */
  bare: Rate;
  worker: Rate;
  /**
   * The worker's first `jobs` jobs after its start, published while it delivers them (the
   * measure of the earlier runs: no warm-up, the bench's publishing on the same cores).
   */
  cold: Rate;
}

/**
 * The worker's NODE_OPTIONS as deploy/base/core/delivery-worker.yaml sets them (its V8 heap
 * sizes), so the bench measures the process as it runs in production.
 */
export const DEPLOYED_NODE_OPTIONS = deployedNodeOptions('delivery-worker') ?? '';

/** User + system CPU of the worker processes so far, summed, in ms. */
function cpuMsOfAll(processes: readonly ChildProcess[]): number {
  return processes.reduce((sum, p) => sum + cpuMsOf(p.pid), 0);
}

/** User + system CPU of a process so far, in ms (Linux /proc; NaN elsewhere). */
function cpuMsOf(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1_000) / 100;
  } catch {
    return NaN;
  }
}

/** User + system CPU so far, in ms, of every process whose name (`comm`) is `name`. */
function cpuMsOfNamed(name: string): number {
  let sum = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) !== name) continue;
      const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
      sum += ((Number(fields[11]) + Number(fields[12])) * 1_000) / 100;
    } catch {
      // exited meanwhile
    }
  }
  return sum;
}

/** The worker's event-loop busy time so far (s) and when it was read (ms, this clock). */
async function eventLoopBusyOf(httpUrl: string): Promise<{ busyS: number; atMs: number }> {
  const text = await (await fetch(`${httpUrl}/metrics`)).text();
  const atMs = performance.now();
  const line = /^nodejs_eventloop_busy_seconds_total(?:\{[^}]*\})? (\S+)$/m.exec(text);
  return { busyS: line ? Number(line[1]) : NaN, atMs };
}

/** A payload the size of a real address_activity event (~1 KB of JSON). */
export function payloadOf(webhookId: string, eventId: string): Record<string, unknown> {
  return {
    webhookId,
    eventId,
    type: 'address_activity',
    network: 'eth-mainnet',
    confirmed: false,
    removed: false,
    block: { number: '0x1234', hash: `0x${'ab'.repeat(32)}`, timestamp: '0x6789abcd' },
    activity: {
      from: `0x${'11'.repeat(20)}`,
      to: `0x${'22'.repeat(20)}`,
      value: '0xde0b6b3a7640000',
      asset: 'ETH',
      category: 'external',
    },
    raw: {
      transactionHash: `0x${'cd'.repeat(32)}`,
      transactionIndex: '0x5',
      logIndex: null,
      input: `0x${'00'.repeat(200)}`,
    },
  };
}

/** The receiver process, driven over IPC (`failEvery` n > 0: every n-th request answered 503). */
export class ReceiverProcess {
  private child!: ChildProcess;
  urls: string[] = [];

  constructor(private readonly failEvery = 0) {}

  get pid(): number | undefined {
    return this.child.pid;
  }

  async start(): Promise<void> {
    this.child = spawn(
      process.execPath,
      [
        '-r',
        '@swc-node/register',
        join(__dirname, 'receiver.ts'),
        String(HOSTS),
        String(this.failEvery),
      ],
      { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
    );
    this.urls = (await this.next<{ urls: string[] }>('urls')).urls;
  }

  async reset(): Promise<void> {
    this.child.send('reset');
    await this.next('reset');
  }

  async report(): Promise<ReceiverReport> {
    this.child.send('report');
    return (await this.next<{ report: ReceiverReport }>('report')).report;
  }

  async waitFor(count: number, timeoutMs: number): Promise<ReceiverReport> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const report = await this.report();
      if (report.count >= count) return report;
      if (Date.now() > deadline)
        throw new Error(`receiver got ${report.count} of ${count} requests in time`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  stop(): void {
    this.child.disconnect();
  }

  private next<T>(key: string): Promise<T> {
    return new Promise((resolvePromise, reject) => {
      const onMessage = (message: Record<string, unknown>) => {
        if (!(key in message)) return;
        this.child.off('message', onMessage);
        this.child.off('exit', onExit);
        resolvePromise(message as T);
      };
      const onExit = (code: number | null) => reject(new Error(`receiver exited (${code})`));
      this.child.on('message', onMessage);
      this.child.once('exit', onExit);
    });
  }
}

function rateOf(report: ReceiverReport, cpuMs: number): Rate {
  const times = [...report.times].sort((a, b) => a - b);
  const from = Math.floor(times.length * 0.1);
  const to = Math.floor(times.length * 0.9) - 1;
  const seconds = (times[to]! - times[from]!) / 1_000;
  return {
    perSecond: (to - from) / seconds,
    count: report.count,
    distinctIds: report.distinctIds,
    unsigned: report.unsigned,
    cpuMsPerRequest: cpuMs / report.count,
  };
}

/** The floor: undici POSTs with the same body, the same concurrency, the same 32 endpoints. */
async function bareLoop(receiver: ReceiverProcess, jobs: number): Promise<Rate> {
  await receiver.reset();
  // The worker has at most 10 in flight per endpoint URL, one URL per origin here; so does the floor.
  const agent = new Agent({ connections: 10 });
  const body = JSON.stringify(payloadOf('wh_bare', 'ev_bare'));
  let next = 0;
  const cpu = process.cpuUsage();
  const lane = async () => {
    for (;;) {
      const i = next++;
      if (i >= jobs) return;
      const answer = await request(receiver.urls[i % receiver.urls.length]!, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'application/json', 'webhook-id': `bare_${i}` },
        body,
      });
      await answer.body.text();
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
  const used = process.cpuUsage(cpu);
  await agent.close();
  return rateOf(await receiver.report(), (used.user + used.system) / 1_000);
}

async function waitReady(url: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`delivery-worker exited (${child.exitCode})`);
    const ok = await fetch(url, { signal: AbortSignal.timeout(2_000) })
      .then((r) => r.ok)
      .catch(() => false);
    if (ok) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('delivery-worker did not become ready in time');
}

function runScript(script: string, env: Record<string, string>): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, ['-r', '@swc-node/register', join(ROOT, script)], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    child.on('exit', (code) =>
      code === 0 ? resolvePromise() : reject(new Error(`${script} exited with ${code}`)),
    );
  });
}

export interface DeliveryWorker {
  /** One process per partition (ADR 0432): worker i reads the jobs of route i. */
  processes: ChildProcess[];
  client: NatsClient;
  prefix: string;
  /** One active webhook per receiver URL, on 8 accounts; its route among the workers. */
  webhooks: { webhookId: string; accountId: string; targetUrl: string; route: number }[];
  publisher: JetStreamPublisher;
  /** The first worker's health and metrics server (`/metrics`). */
  httpUrl: string;
  stop(): Promise<void>;
}

/**
 * The real delivery-worker process on a database and NATS namespace of its own, ready, with one
 * active webhook (in the webhook-status KV, a sealed secret each) per receiver URL: signing, the
 * SSRF check of each target, the breaker, the endpoint limits, the attempt log in Postgres,
 * health events and billing all on.
 */
export async function startDeliveryWorker(urls: string[], workers = 1): Promise<DeliveryWorker> {
  const db = await createTestDatabase({ prefix: 'bench_delivery' });
  const prefix = uniqueNatsPrefix();
  const client = new NatsClient({ url: testNatsUrl(), name: `bench-delivery-${prefix}` });
  const processes: ChildProcess[] = [];
  const stop = async () => {
    await Promise.all(
      processes
        .filter((worker) => worker.exitCode === null)
        .map((worker) => {
          const exited = new Promise((r) => worker.once('exit', r));
          worker.kill('SIGTERM');
          return exited;
        }),
    );
    await client.close();
    await deleteNatsNamespace(testNatsUrl(), prefix).catch(() => undefined);
    await db.drop().catch(() => undefined);
  };
  try {
    await runScript('apps/delivery-worker/src/migrate.ts', { DATABASE_URL: db.url });
    const nc = await client.connection();
    await provisionMessaging(await jetstreamManager(nc), prefix, {
      streams: [Streams.WEBHOOK, Streams.BILLING],
      consumers: deliveryJobsConsumers(workers),
      buckets: [KvBuckets.webhookStatus, KvBuckets.balanceState],
    });
    const secretsKey = randomBytes(32);
    const kv = await new Kvm(nc).open(`${prefix}_${KvBuckets.webhookStatus.name}`);
    const webhooks = urls.map((targetUrl, i) => ({
      webhookId: `wh_bench_${i}`,
      accountId: `acc_bench_${i % 8}`,
      targetUrl,
      route: deliveryRouteOf(targetUrl, workers),
    }));
    for (const w of webhooks) {
      const entry: WebhookStatusEntry = {
        webhookId: w.webhookId,
        accountId: w.accountId,
        targetUrl: w.targetUrl,
        status: 'active',
        version: 1,
        secrets: [
          {
            sealed: sealSecret(secretsKey, `whsec_${randomBytes(24).toString('base64')}`),
            expiresAt: null,
          },
        ],
        updatedAt: new Date().toISOString(),
      };
      await kv.put(entry.webhookId, JSON.stringify(entry));
    }

    const ports: number[] = [];
    for (let partition = 0; partition < workers; partition += 1) {
      const port = await freePort();
      ports.push(port);
      const worker = spawn(
        process.execPath,
        [
          // DELIVERY_BENCH_PROFILE=<dir>: a CPU profile of the worker, written when it stops.
          ...(process.env['DELIVERY_BENCH_PROFILE']
            ? ['--cpu-prof', '--cpu-prof-dir', process.env['DELIVERY_BENCH_PROFILE']]
            : []),
          '-r',
          '@swc-node/register',
          join(ROOT, 'apps/delivery-worker/src/main.ts'),
        ],
        {
          cwd: ROOT,
          env: {
            ...process.env,
            DATABASE_URL: db.url,
            NATS_URL: testNatsUrl(),
            NATS_PREFIX: prefix,
            HTTP_PORT: String(port),
            HTTP_HOST: '127.0.0.1',
            LOG_LEVEL: 'warn',
            ALLOW_LOOPBACK_TARGETS: 'true',
            WEBHOOK_SECRETS_KEY: secretsKey.toString('base64'),
            DELIVERY_PARTITION: `${partition}/${workers}`,
            // As deployed (the StatefulSet's NODE_OPTIONS: the young generation's size).
            NODE_OPTIONS: DEPLOYED_NODE_OPTIONS,
          },
          stdio: ['ignore', 'ignore', 'inherit'],
        },
      );
      processes.push(worker);
    }
    await Promise.all(
      processes.map((worker, i) =>
        waitReady(`http://127.0.0.1:${ports[i]}/readyz`, worker, 180_000),
      ),
    );
    const publisher = new JetStreamPublisher(client, new NatsNamespace(prefix));
    return {
      processes,
      client,
      prefix,
      webhooks,
      publisher,
      httpUrl: `http://127.0.0.1:${ports[0]}`,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** A delivery job of webhook `w` for event `eventId`, attempt 1, unconfirmed phase. */
export function jobOf(
  w: DeliveryWorker['webhooks'][number],
  eventId: string,
  createdAt: string,
): DeliveryJob {
  return {
    id: deliveryJobId(w.webhookId, eventId, 'unconfirmed'),
    webhookId: w.webhookId,
    accountId: w.accountId,
    eventId,
    phase: 'unconfirmed',
    test: false,
    attempt: 1,
    payload: payloadOf(w.webhookId, eventId) as DeliveryJob['payload'],
    createdAt,
    route: w.route,
  };
}

/** Publishes `count` delivery jobs of the worker's webhooks (64 publishes in flight). */
async function publishJobs(worker: DeliveryWorker, count: number, tag: string): Promise<void> {
  const createdAt = new Date().toISOString();
  let next = 0;
  const publishLane = async () => {
    for (;;) {
      const i = next++;
      if (i >= count) return;
      const w = worker.webhooks[i % worker.webhooks.length]!;
      await worker.publisher.publish(Events.deliveryJob, jobOf(w, `ev_${tag}_${i}`, createdAt));
    }
  };
  await Promise.all(Array.from({ length: 64 }, publishLane));
}

/** The worker delivering `jobs` jobs published while it runs (its first ones: cold). */
async function workerCold(
  receiver: ReceiverProcess,
  worker: DeliveryWorker,
  jobs: number,
  tag: string,
): Promise<Rate> {
  await receiver.reset();
  const cpuBefore = cpuMsOfAll(worker.processes);
  await publishJobs(worker, jobs, tag);
  const report = await receiver.waitFor(jobs, 300_000);
  return rateOf(report, cpuMsOfAll(worker.processes) - cpuBefore);
}

/**
 * The worker draining a queue: it is stopped (SIGSTOP) while the bench publishes the round's
 * jobs, so neither the publishing nor the bench's CPU falls in the window, then resumed. The
 * host buckets (200 req/s, burst 200) are full first: the round's jobs per host stay within
 * the burst, so the limit is checked on every attempt but does not bind.
 */
async function workerDrain(
  receiver: ReceiverProcess,
  worker: DeliveryWorker,
  jobs: number,
  tag: string,
): Promise<Rate> {
  await new Promise((r) => setTimeout(r, 1_000));
  await receiver.reset();
  const pids = worker.processes.map((p) => p.pid!);
  let cpuBefore: number;
  for (const pid of pids) process.kill(pid, 'SIGSTOP');
  const others = () => ({
    postgres: cpuMsOfNamed('postgres'),
    nats: cpuMsOfNamed('nats-server'),
    receiver: cpuMsOf(receiver.pid),
  });
  let othersBefore: ReturnType<typeof others>;
  try {
    await publishJobs(worker, jobs, tag);
  } finally {
    cpuBefore = cpuMsOfAll(worker.processes);
    othersBefore = others();
    for (const pid of pids) process.kill(pid, 'SIGCONT');
  }
  const loopBefore = await eventLoopBusyOf(worker.httpUrl);
  const report = await receiver.waitFor(jobs, 300_000);
  const loopAfter = await eventLoopBusyOf(worker.httpUrl);
  const othersAfter = others();
  const rate = rateOf(report, cpuMsOfAll(worker.processes) - cpuBefore);
  const per = (key: keyof ReturnType<typeof others>) =>
    (othersAfter[key] - othersBefore[key]) / report.count;
  rate.during = {
    eventLoopUtilization:
      ((loopAfter.busyS - loopBefore.busyS) * 1_000) / (loopAfter.atMs - loopBefore.atMs),
    postgresMs: per('postgres'),
    natsMs: per('nats'),
    receiverMs: per('receiver'),
  };
  return rate;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function medianRate(rates: Rate[]): Rate {
  const rate: Rate = {
    perSecond: median(rates.map((r) => r.perSecond)),
    count: Math.min(...rates.map((r) => r.count)),
    distinctIds: Math.min(...rates.map((r) => r.distinctIds)),
    unsigned: Math.max(...rates.map((r) => r.unsigned)),
    cpuMsPerRequest: median(rates.map((r) => r.cpuMsPerRequest)),
  };
  const during = rates.flatMap((r) => (r.during ? [r.during] : []));
  if (during.length > 0)
    rate.during = {
      eventLoopUtilization: median(during.map((d) => d.eventLoopUtilization)),
      postgresMs: median(during.map((d) => d.postgresMs)),
      natsMs: median(during.map((d) => d.natsMs)),
      receiverMs: median(during.map((d) => d.receiverMs)),
    };
  return rate;
}

/**
 * One run: the receiver; the bare loop warmed up (2,000 requests); the worker started, its
 * first `jobs` jobs measured as they are published (cold), `jobs` more to warm it up; then
 * `rounds` interleaved rounds of the bare loop and the warm worker draining a queue of `jobs`
 * (interleaved, so that whatever else the machine does falls on both alike). Each round
 * counts its own requests: every job delivered once, signed.
 */
export async function measureThroughput(
  jobs: number,
  rounds = 3,
  workers = 1,
): Promise<ThroughputResult> {
  const receiver = new ReceiverProcess();
  await receiver.start();
  try {
    await bareLoop(receiver, Math.min(jobs, 2_000)); // warm-up of receiver and loopback
    const worker = await startDeliveryWorker(receiver.urls, workers);
    try {
      const cold = await workerCold(receiver, worker, jobs, 'cold');
      await workerCold(receiver, worker, jobs, 'warm-up');
      const measured: ThroughputResult['rounds'] = [];
      for (let round = 0; round < rounds; round += 1) {
        const bare = await bareLoop(receiver, jobs);
        measured.push({ bare, worker: await workerDrain(receiver, worker, jobs, `r${round}`) });
      }
      return {
        jobs,
        rounds: measured,
        bare: medianRate(measured.map((r) => r.bare)),
        worker: medianRate(measured.map((r) => r.worker)),
        cold,
      };
    } finally {
      await worker.stop();
    }
  } finally {
    receiver.stop();
  }
}

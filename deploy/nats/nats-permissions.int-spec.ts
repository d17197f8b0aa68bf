import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  deliveryRouteOf,
  deploymentConsumers,
  Events,
  KvBuckets,
  partitionOf,
  Streams,
  Subjects,
  type ConsumerDeclaration,
} from '@meridian/contracts';
import {
  flushParts,
  JetStreamConsumers,
  JetStreamPublisher,
  NatsClient,
  NatsNamespace,
  natsAuthorizationConfig,
  natsConnectOptions,
  natsPasswordVariable,
  natsPermissionsOf,
  natsRoles,
  PubAckBatch,
  publishUsagePart,
  UsageFlusher,
  UsageMeter,
  type ConsumedMessage,
  type NatsDeployment,
  type NatsRole,
} from '@meridian/platform-messaging';
import {
  createTestDatabase,
  freePort,
  messagingAttached,
  runAppScript,
  startAnvil,
  startAppProcess,
  startBillingLedgerProcess,
  type AnvilInstance,
  type AppProcess,
  type BillingLedgerProcess,
  type TestDatabase,
} from '@meridian/testing';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect, errors, type NatsConnection } from '@nats-io/transport-node';
import { z } from 'zod';

type PermissionViolationError = InstanceType<typeof errors.PermissionViolationError>;

/**
 * ADR 0507: the committed authorization block (deploy/nats/authorization.conf) is the table of
 * libs/platform/messaging rendered for deploy/'s provisioning Job, and a real nats-server
 * running exactly that block lets every app do what its code does on the bus, and refuses the
 * cross-app operations a compromised app would try.
 *
 * The apps themselves run as processes (their main.ts), each as its NATS user: a node call and
 * a webhook delivery go through all six, and nats-server's log must hold no violation. Beside
 * that, each app's operations one by one, through the project's own code wherever it can be
 * called from outside an app: the provisioning command itself (tools/messaging/provision.ts,
 * as the `provision` user), and platform-messaging's NatsClient (the app's inbox prefix), JetStreamPublisher, ConsumerRunner
 * (through JetStreamConsumers: pulls, acks, terms, dead letters), KvMirror, PubAckBatch,
 * UsageFlusher and publishUsagePart. What lives in an app (billing-ledger's KvBatchPut and
 * PartitionTakeover and UnreadUsage, chain-indexer's NetworkLease, webhook-matcher's
 * StatusPublisher and SecretReseal) is repeated with the same nats.js calls those classes make:
 * the module boundaries keep a deploy test from importing an app.
 */

const NATS_SERVER = process.env.NATS_SERVER_BIN ?? '/usr/sbin/nats-server';
const COMMITTED = join(__dirname, 'authorization.conf');
const PROVISION_JOB = join(__dirname, '..', 'base', 'core', 'provision-job.yaml');

/** The provisioning Job's partition counts: the durables the committed block names. */
function deployedCounts(): NatsDeployment {
  const job = readFileSync(PROVISION_JOB, 'utf8');
  const count = (name: string): number => {
    const match = new RegExp(`- name: ${name}\\s+value: '(\\d+)'`).exec(job);
    if (!match) throw new Error(`${name} not found in ${PROVISION_JOB}`);
    return Number(match[1]);
  };
  const common = readFileSync(join(__dirname, '..', 'components', 'common', 'common.env'), 'utf8');
  const prefix = /^NATS_PREFIX=(.*)$/m.exec(common)?.[1]?.trim() ?? '';
  return {
    prefix,
    matcherPartitions: count('MATCHER_PARTITIONS'),
    deliveryPartitions: count('DELIVERY_PARTITIONS'),
  };
}

const deployment = deployedCounts();
const ns = new NatsNamespace(deployment.prefix);
const durables = deploymentConsumers({
  matcher: deployment.matcherPartitions,
  delivery: deployment.deliveryPartitions,
});
// nats-server parses a variable's value as configuration: a leading digit would make the
// password a number and stop the server (deploy/README.md, "NATS permissions").
const passwords = Object.fromEntries(
  natsRoles.map((role) => [role, `p${randomBytes(12).toString('hex')}`]),
) as Record<NatsRole, string>;

let dir: string;
let server: ChildProcess;
/** Everything nats-server wrote: it logs each violation with the user (`Publish Violation - User "…"`). */
let serverLog = '';
let port: number;
let admin: NatsConnection;
let adminJsm: JetStreamManager;
const clients: AppClient[] = [];

function urlOf(role: NatsRole): string {
  return `nats://${role}:${passwords[role]}@127.0.0.1:${port}`;
}

/** One connection of an app, as the app makes it, with every permission violation it got. */
class AppClient {
  readonly client: NatsClient;
  readonly publisher: JetStreamPublisher;
  readonly consumers: JetStreamConsumers;
  readonly violations: PermissionViolationError[] = [];
  readonly deadLetters = new Map<string, number>();
  private readonly waiters: Array<() => void> = [];

  constructor(
    readonly role: NatsRole,
    name: string = role,
  ) {
    this.client = new NatsClient({ url: urlOf(role), name, retryDelayMs: 200 });
    this.publisher = new JetStreamPublisher(this.client, ns, 3_000);
    this.consumers = new JetStreamConsumers({
      client: this.client,
      namespace: ns,
      publisher: this.publisher,
      retryDelayMs: 200,
      deadLettered: {
        inc: ({ consumer }) => {
          this.deadLetters.set(consumer, (this.deadLetters.get(consumer) ?? 0) + 1);
          this.notify();
        },
      },
    });
    clients.push(this);
  }

  async connect(): Promise<NatsConnection> {
    const nc = await this.client.connection();
    void (async () => {
      for await (const status of nc.status())
        if (status.type === 'error' && status.error instanceof errors.PermissionViolationError) {
          this.violations.push(status.error);
          this.notify();
        }
    })();
    return nc;
  }

  /** Resolves once `done()` holds (checked after every dead letter and violation, and on a timer). */
  async until(what: string, done: () => boolean, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      if (Date.now() > deadline) throw new Error(`${this.role}: timed out waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 100);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Resolves with the violation the server reported for `subject` (denied). */
  async denied(operation: 'publish' | 'subscription', subject: string): Promise<void> {
    await this.until(
      `a permissions violation for ${operation} to ${subject}`,
      () => this.violations.some((v) => v.operation === operation && v.subject === subject),
      5_000,
    );
  }

  private notify(): void {
    for (const wake of this.waiters.splice(0)) wake();
  }

  async close(): Promise<void> {
    await this.consumers.stopAll();
    await this.client.close();
  }
}

/** A body no consumer's schema accepts: the runner dead-letters it (term + publish). */
const junk = (tag: string) => ({ junk: tag });
let seq = 0;
const msgId = (tag: string) => `perm-test-${tag}-${(seq += 1)}`;

function owned(owner: string): ConsumerDeclaration[] {
  return durables.filter((c) => c.owner === owner);
}

/** Whether the stream's last message on `subject` is a forged one (asked as the provisioning user). */
async function forgedStored(stream: string, subject: string): Promise<boolean> {
  const message = await adminJsm.streams
    .getMessage(ns.stream(stream), { last_by_subj: ns.subject(subject) })
    .catch(() => null);
  return message?.string().includes('forged') ?? false;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'nats-permissions-'));
  port = await freePort();
  copyFileSync(COMMITTED, join(dir, 'authorization.conf'));
  const conf = join(dir, 'nats.conf');
  writeFileSync(
    conf,
    [
      `listen: 127.0.0.1:${port}`,
      `jetstream { store_dir: ${JSON.stringify(join(dir, 'js'))} }`,
      'include ./authorization.conf',
      '',
    ].join('\n'),
  );
  const env = { ...process.env };
  for (const role of natsRoles) env[natsPasswordVariable(role)] = passwords[role];
  server = spawn(NATS_SERVER, ['-c', conf], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    server.stderr!.on('data', (chunk: Buffer) => {
      serverLog += chunk.toString();
      if (serverLog.includes('Server is ready')) resolve();
    });
    server.once('exit', (code) => reject(new Error(`nats-server exited ${code}: ${serverLog}`)));
  });
  // The provisioning command itself, as the provisioning Job runs it.
  await runAppScript('tools/messaging/provision.ts', {
    NATS_URL: urlOf('provision'),
    NATS_PREFIX: deployment.prefix,
    MATCHER_PARTITIONS: String(deployment.matcherPartitions),
    DELIVERY_PARTITIONS: String(deployment.deliveryPartitions),
  });
  admin = await connect({ ...natsConnectOptions({ url: urlOf('provision') }), name: 'provision' });
  adminJsm = await jetstreamManager(admin);
}, 120_000);

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  await admin?.close();
  server?.kill('SIGTERM');
  if (server && server.exitCode === null) await new Promise((r) => server.once('exit', r));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the committed authorization block', () => {
  it("is the table rendered for deploy/'s provisioning Job (render it again after a change)", () => {
    expect(readFileSync(COMMITTED, 'utf8')).toBe(natsAuthorizationConfig(deployment));
  });

  it('lets the provisioning command create every stream, durable and bucket', async () => {
    const streams: string[] = [];
    for await (const info of adminJsm.streams.list()) streams.push(info.config.name);
    expect(streams.sort()).toEqual(
      [
        ...Object.values(Streams).map((s) => ns.stream(s.name)),
        ...Object.values(KvBuckets).map((b) => `KV_${ns.bucket(b.name)}`),
      ].sort(),
    );
    for (const consumer of durables)
      await expect(
        adminJsm.consumers.info(ns.stream(consumer.stream), ns.consumer(consumer.durable)),
      ).resolves.toBeDefined();
  });

  it('refuses a connection of no user and a wrong password', async () => {
    for (const url of [`nats://127.0.0.1:${port}`, `nats://rpc-gateway:wrong@127.0.0.1:${port}`])
      await expect(
        connect({ ...natsConnectOptions({ url }), timeout: 3_000, maxReconnectAttempts: 0 }),
      ).rejects.toThrow(/Authorization Violation/i);
  });
});

describe('every app does on the bus what its code does', () => {
  const ledger = () => apps['billing-ledger'];
  const apps = {} as Record<Exclude<NatsRole, 'provision'>, AppClient>;
  const ledgerSeen: ConsumedMessage[] = [];
  const mirrors = {} as Record<string, { values: Map<string, unknown>; ready: Promise<void> }>;

  function mirror(app: AppClient, bucket: string): void {
    const values = new Map<string, unknown>();
    const m = app.consumers.mirror(bucket, z.unknown(), (key, value) => {
      if (value === undefined) values.delete(key);
      else values.set(key, value);
    });
    mirrors[`${app.role}:${bucket}`] = { values, ready: m.initialized };
  }

  beforeAll(async () => {
    for (const role of natsRoles)
      if (role !== 'provision') {
        apps[role] = new AppClient(role);
        await apps[role].connect();
      }
    // The consumers, as the apps run them (billing-ledger: every usage durable, the way a
    // replica stands in for the others; the matcher and the workers: the deployment's).
    for (const consumer of owned('billing-ledger'))
      ledger().consumers.run(consumer, async (message) => {
        ledgerSeen.push(message);
      });
    for (const consumer of owned('webhook-matcher'))
      apps['webhook-matcher'].consumers.run(consumer, async () => undefined);
    for (const consumer of owned('delivery-worker'))
      apps['delivery-worker'].consumers.run(consumer, async () => undefined);
    // The KV mirrors, as the apps start them.
    mirror(apps['rpc-gateway'], KvBuckets.balanceState.name);
    mirror(apps['rpc-gateway'], KvBuckets.revokedCredentials.name);
    mirror(apps['delivery-worker'], KvBuckets.webhookStatus.name);
    mirror(apps['delivery-worker'], KvBuckets.balanceState.name);
    mirror(apps['webhook-matcher'], KvBuckets.webhookStatus.name);
    mirror(apps['webhook-matcher'], KvBuckets.revokedCredentials.name);
    mirror(apps['audit-api'], KvBuckets.revokedCredentials.name);
    await Promise.all(Object.values(mirrors).map((m) => m.ready));
  }, 60_000);

  afterEach(() => {
    // Nothing an app does may be refused.
    for (const app of Object.values(apps)) expect(app.violations).toEqual([]);
  });

  it('rpc-gateway: its usage flushes (v2 and the v1 of an upgrade) reach the ledger', async () => {
    const meter = new UsageMeter();
    const flusher = (version: 1 | 2) =>
      new UsageFlusher(apps['rpc-gateway'].publisher, {
        producerId: `gw-perm-v${version}`,
        intervalMs: 60_000,
        now: () => new Date(),
        drain: () => meter.drain(),
        version,
      });
    for (const version of [2, 1] as const) {
      meter.add(`acct-gw-${version}`, 'eth-mainnet', 'eth_blockNumber', 20);
      const f = flusher(version);
      await f.flush();
      expect(f.pendingParts).toBe(0);
    }
    await ledger().until('both usage parts', () =>
      [Events.usageFlushedV2.type, Events.usageFlushed.type].every((type) =>
        ledgerSeen.some((m) => m.event.type === type),
      ),
    );
  });

  it('delivery-worker: usage of its attempts, delivery health, its jobs and KV mirrors', async () => {
    const worker = apps['delivery-worker'];
    const meter = new UsageMeter();
    meter.addDelivery('acct-dw', 'wh_perm', 25);
    const now = new Date().toISOString();
    for (const part of flushParts('dw-perm', now, now, meter.drain()))
      await publishUsagePart(worker.publisher, part, 2);
    await ledger().until('the worker usage part', () =>
      ledgerSeen.some(
        (m) => m.subject.includes('usage') && JSON.stringify(m.payload).includes('dw-perm'),
      ),
    );
    // Health goes out through PubAckBatch (HealthPublisher); the matcher's durable reads it.
    const nc = await worker.client.connection();
    await new PubAckBatch().publishAll(
      nc,
      [
        {
          subject: ns.subject(Subjects.webhook.deliveryHealth.of('acct-dw')),
          data: JSON.stringify(junk('health')),
        },
      ],
      3_000,
    );
    const health = apps['webhook-matcher'];
    await health.until('the health message dead-lettered by the matcher', () =>
      health.deadLetters.has('webhook-matcher-delivery-health'),
    );
  });

  it("webhook-matcher: delivery jobs to every worker's route, webhook status in KV (and the reseal's reads)", async () => {
    const matcher = apps['webhook-matcher'];
    const worker = apps['delivery-worker'];
    for (let route = 0; route < deployment.deliveryPartitions; route++)
      await matcher.publisher.publishJson(
        Subjects.webhook.deliveryJob.of(`r${route}`),
        junk(`job-r${route}`),
        msgId('job'),
        ns.stream('WEBHOOK'),
      );
    // Each worker's durable pulls its route's job, terms it and parks it (a dead letter).
    await worker.until('every route dead-lettered', () =>
      owned('delivery-worker').every((c) => worker.deadLetters.has(c.durable)),
    );
    // StatusPublisher: kv.put per webhook; delivery-worker's and the matcher's mirrors see it.
    const kv = await new Kvm(matcher.client.jetstream()).open(
      ns.bucket(KvBuckets.webhookStatus.name),
    );
    await kv.put('wh_perm', JSON.stringify({ status: 'active' }));
    await worker.until('the status in the worker mirror', () =>
      mirrors[`delivery-worker:${KvBuckets.webhookStatus.name}`]!.values.has('wh_perm'),
    );
    // SecretReseal runs as a CronJob of its own connection name, as the matcher's user.
    const reseal = new AppClient('webhook-matcher', 'webhook-matcher-reseal');
    await reseal.connect();
    const resealKv = await new Kvm(reseal.client.jetstream()).open(
      ns.bucket(KvBuckets.webhookStatus.name),
    );
    const keys: string[] = [];
    for await (const key of await resealKv.keys()) keys.push(key);
    expect(keys).toContain('wh_perm');
    expect((await resealKv.get('wh_perm'))?.string()).toContain('active');
    expect(reseal.violations).toEqual([]);
  });

  it('chain-indexer: blocks and removals for the matcher, its lease in KV', async () => {
    const indexer = apps['chain-indexer'];
    const matcher = apps['webhook-matcher'];
    await indexer.publisher.publishJson(
      Subjects.chain.block.of('eth-mainnet'),
      junk('block'),
      msgId('block'),
      ns.stream('CHAIN'),
    );
    await indexer.publisher.publishJson(
      Subjects.chain.removed.of('eth-mainnet'),
      junk('removed'),
      msgId('removed'),
      ns.stream('CHAIN'),
    );
    // Every matcher partition's durable reads both (ordered, one at a time) and parks them.
    await matcher.until('blocks dead-lettered on every partition', () =>
      owned('webhook-matcher')
        .filter((c) => c.stream === 'CHAIN')
        .every((c) => (matcher.deadLetters.get(c.durable) ?? 0) >= 2),
    );
    // NetworkLease: get, create, compare-and-set renewals, release.
    const kv = await new Kvm(indexer.client.jetstream()).open(
      ns.bucket(KvBuckets.indexerLeases.name),
    );
    expect(await kv.get('eth-mainnet')).toBeNull();
    const created = await kv.create('eth-mainnet', JSON.stringify({ holder: 'a' }));
    const renewed = await kv.update('eth-mainnet', JSON.stringify({ holder: 'a' }), created);
    await kv.delete('eth-mainnet', { previousSeq: renewed });
  });

  it('billing-ledger: balance state in KV, account events for the matcher, revocations, liveness requests, unread usage', async () => {
    const nc = await ledger().client.connection();
    const matcher = apps['webhook-matcher'];
    // KvBatchPut: plain publishes to $KV.<bucket>.<key> acked through PubAckBatch.
    await new PubAckBatch().publishAll(
      nc,
      [
        {
          subject: `$KV.${ns.bucket(KvBuckets.balanceState.name)}.acct-perm`,
          data: JSON.stringify({ state: 'ok' }),
        },
      ],
      3_000,
    );
    await apps['rpc-gateway'].until('the balance state in the gateway mirror', () =>
      mirrors[`rpc-gateway:${KvBuckets.balanceState.name}`]!.values.has('acct-perm'),
    );
    // StatePublisher: the revocation's KV entry (kv.put) and its event.
    const revoked = await new Kvm(ledger().client.jetstream()).open(
      ns.bucket(KvBuckets.revokedCredentials.name),
    );
    await revoked.put('api_key.00ff', JSON.stringify({ revoked: true }));
    for (const mirrored of ['rpc-gateway', 'webhook-matcher', 'audit-api'])
      await apps[mirrored as 'audit-api'].until(`the revocation in ${mirrored}'s mirror`, () =>
        mirrors[`${mirrored}:${KvBuckets.revokedCredentials.name}`]!.values.has('api_key.00ff'),
      );
    for (const subject of [
      Subjects.billing.credentialRevoked.of('acct-perm'),
      Subjects.billing.topUpCleared.of('acct-perm'),
      Subjects.billing.balanceChanged.of('acct-perm'),
      Subjects.billing.planChanged.of('acct-perm'),
    ])
      await ledger().publisher.publishJson(
        subject,
        junk(subject),
        msgId('billing'),
        ns.stream('BILLING'),
      );
    await matcher.until(
      'both account changes parked by the matcher',
      () => (matcher.deadLetters.get('webhook-matcher-account-changes') ?? 0) >= 2,
    );
    // The ledger's own consumer runner parks a bad usage part (published by the gateway).
    await apps['rpc-gateway'].publisher.publishJson(
      Subjects.billing.usageFlushedV2.of('u0'),
      junk('usage'),
      msgId('usage'),
      ns.stream('BILLING'),
    );
    await ledger().until('the bad part parked', () => ledger().deadLetters.size > 0);
    // PartitionTakeover: replica i answers on its liveness subject, another replica asks.
    const answering = nc.subscribe(ns.subject(Subjects.control.ledgerPartitionAlive.of('u0')), {
      callback: (_error, msg) => {
        msg.respond('alive');
      },
    });
    const other = new AppClient('billing-ledger');
    const otherNc = await other.connect();
    const answer = await otherNc.request(
      ns.subject(Subjects.control.ledgerPartitionAlive.of('u0')),
      undefined,
      { timeout: 3_000 },
    );
    expect(answer.string()).toBe('alive');
    answering.unsubscribe();
    expect(other.violations).toEqual([]);
    // UnreadUsage: the BILLING stream's usage subjects, and the last message of one.
    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.info(ns.stream('BILLING'), {
      subjects_filter: ns.subject(Subjects.billing.usageAll),
    });
    const subjects = Object.keys(info.state.subjects ?? {});
    expect(subjects.length).toBeGreaterThan(0);
    const last = await jsm.streams.getMessage(ns.stream('BILLING'), {
      last_by_subj: subjects[0]!,
    });
    expect(last?.subject).toBe(subjects[0]);
  });

  it('a balance-state snapshot of megabytes loads in a new mirror (flow control answered)', async () => {
    // A watch is a push consumer with flow control: past about 2 MiB unread the server waits
    // for the client's answer on $JS.FC.<stream>.…; without that grant the watch stalls.
    const nc = await ledger().client.connection();
    const value = JSON.stringify({ pad: 'x'.repeat(8_000) });
    const keys = Array.from({ length: 600 }, (_, i) => `fc-${i}`);
    await new PubAckBatch().publishAll(
      nc,
      keys.map((key) => ({
        subject: `$KV.${ns.bucket(KvBuckets.balanceState.name)}.${key}`,
        data: value,
      })),
      10_000,
    );
    const reader = new AppClient('rpc-gateway');
    await reader.connect();
    const fresh = reader.consumers.mirror(KvBuckets.balanceState.name, z.unknown());
    await reader.until('the whole snapshot', () => keys.every((key) => fresh.has(key)), 20_000);
    expect(reader.violations).toEqual([]);
    await reader.consumers.stopAll();
    const kv = await new Kvm(ledger().client.jetstream()).open(
      ns.bucket(KvBuckets.balanceState.name),
    );
    for (const key of keys) await kv.delete(key);
  });

  it('shutdown (consumers drained, KV watches stopped) is allowed too', async () => {
    for (const app of Object.values(apps)) {
      await app.consumers.stopAll();
      // A refusal comes back before the PONG of this PING.
      await (await app.client.connection()).flush();
    }
  });
});

describe('the real apps, each process as its NATS user', () => {
  const OPERATOR = `op-${randomBytes(8).toString('hex')}`;
  const TOKEN = 'tok_nats_permissions_000001';
  const DEPLOYER = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
  const WATCHED = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
  let anvil: AnvilInstance;
  let ledger: BillingLedgerProcess;
  let gateway: AppProcess;
  let gatewayUrl: string;
  let logFrom: number;
  let db: TestDatabase | undefined;
  let receiver: Server | undefined;
  const processes: AppProcess[] = [];

  beforeAll(async () => {
    logFrom = serverLog.length;
    anvil = await startAnvil({ chainId: 1 });
    ledger = await startBillingLedgerProcess({
      operatorToken: OPERATOR,
      natsPrefix: deployment.prefix,
      databasePrefix: 'nats_permissions',
      env: { NATS_URL: urlOf('billing-ledger'), LOG_LEVEL: 'warn' },
    });
    await ready(`${ledger.url}/readyz`);
  }, 120_000);

  afterAll(async () => {
    for (const app of processes) await app.stop();
    await gateway?.stop();
    await ledger?.stop();
    await anvil?.stop();
    receiver?.close();
    await db?.drop();
  });

  const balanceOf = async (key: string) =>
    ((await ledger.call('GET', '/api/v1/account/balance', key)) as { total_cu: number }).total_cu;

  it('a call through the gateway is metered, published, applied by the ledger and its balance state mirrored', async () => {
    const account = await ledger.createAccount({
      name: 'nats-permissions',
      type: 'individual',
      plan: 'starter',
    });
    const balance = async () =>
      (await ledger.call('GET', '/api/v1/account/balance', account.key)) as {
        total_cu: number;
        version: number;
      };
    const before = await balance();
    gateway = await startAppProcess(async () => {
      const httpPort = await freePort();
      gatewayUrl = `http://127.0.0.1:${httpPort}`;
      return {
        main: 'apps/rpc-gateway/src/main.ts',
        healthUrl: `${gatewayUrl}/healthz`,
        env: {
          NATS_URL: urlOf('rpc-gateway'),
          NATS_PREFIX: deployment.prefix,
          HTTP_HOST: '127.0.0.1',
          HTTP_PORT: String(httpPort),
          GRPC_ENABLED: 'false',
          REGION: 'eu',
          LOG_LEVEL: 'warn',
          USAGE_FLUSH_MS: '200',
          UPSTREAMS: JSON.stringify({ 'eth-mainnet': [anvil.url] }),
          STATIC_ACCESS_TOKENS: JSON.stringify({
            [TOKEN]: { accountId: account.accountId, network: 'eth-mainnet' },
          }),
        },
      };
    });
    await ready(`${gatewayUrl}/readyz`);
    const calls = 3;
    for (let i = 0; i < calls; i++) {
      const answer = await fetch(`${gatewayUrl}/${TOKEN}/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'eth_blockNumber', params: [] }),
      });
      expect(answer.status).toBe(200);
    }
    // 20 CU a call on network E: billed once the ledger applied the gateway's part.
    const deadline = Date.now() + 20_000;
    while ((await balance()).total_cu !== before.total_cu - calls * 20) {
      if (Date.now() > deadline) throw new Error('the usage never reached the ledger');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    // The ledger's state publisher put the new state in KV: an rpc-gateway connection reads it.
    const reader = new AppClient('rpc-gateway');
    await reader.connect();
    const seen = new Map<string, unknown>();
    const mirror = reader.consumers.mirror(
      KvBuckets.balanceState.name,
      z.object({ version: z.number() }).passthrough(),
      (key, value) => seen.set(key, value),
    );
    await mirror.initialized;
    await reader.until('the applied balance state', () => {
      const state = seen.get(account.accountId) as { version: number } | undefined;
      return state !== undefined && state.version > before.version;
    });
    // A revoked key: its KV entry and its event, by the ledger's own code.
    const extra = await ledger.createKey(account.key, 'revoked', ['webhooks']);
    await ledger.call('DELETE', `/api/v1/api-keys/${extra.id}`, account.key);
    expect(reader.violations).toEqual([]);
  }, 120_000);

  it('a transfer to a watched address: indexed, matched, delivered and billed by chain-indexer, webhook-matcher and delivery-worker, each as its user (audit-api beside them)', async () => {
    db = await createTestDatabase({ prefix: 'nats_permissions_apps' });
    for (const app of ['chain-indexer', 'webhook-matcher', 'delivery-worker', 'audit-api'])
      await runAppScript(`apps/${app}/src/migrate.ts`, { DATABASE_URL: db.url });
    await runAppScript('apps/audit-api/src/labels/load-labels.ts', { DATABASE_URL: db.url });
    const received: string[] = [];
    receiver = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        received.push(body);
        response.end();
      });
    });
    const receiverPort = await freePort();
    await new Promise<void>((resolve) => receiver!.listen(receiverPort, '127.0.0.1', resolve));
    const target = `http://127.0.0.1:${receiverPort}/hook`;
    const account = await ledger.createAccount({
      name: 'nats-permissions-webhooks',
      type: 'individual',
      plan: 'starter',
    });
    const secretsKey = randomBytes(32).toString('base64');
    const start = async (app: string, user: NatsRole, env: Record<string, string>) => {
      let url = '';
      processes.push(
        await startAppProcess(async () => {
          const port = await freePort();
          url = `http://127.0.0.1:${port}`;
          return {
            main: `apps/${app}/src/main.ts`,
            healthUrl: `${url}/healthz`,
            env: {
              NATS_URL: urlOf(user),
              NATS_PREFIX: deployment.prefix,
              DATABASE_URL: db!.url,
              HTTP_HOST: '127.0.0.1',
              HTTP_PORT: String(port),
              LOG_LEVEL: 'warn',
              BILLING_GRPC_URL: ledger.grpcTarget,
              ...env,
            },
            startTimeoutMs: 120_000,
          };
        }),
      );
      await ready(`${url}/readyz`);
      return url;
    };
    const matcherUrl = await start('webhook-matcher', 'webhook-matcher', {
      NETWORKS: 'eth-mainnet',
      WEBHOOK_SECRETS_KEY: secretsKey,
      WEBHOOK_ALLOW_LOOPBACK_TARGETS: 'true',
      // The replica that owns the account, of the deployment's count (ADR 0422, 0432).
      MATCHER_PARTITION: `${partitionOf(account.accountId, deployment.matcherPartitions)}/${deployment.matcherPartitions}`,
      DELIVERY_PARTITIONS: String(deployment.deliveryPartitions),
    });
    await start('delivery-worker', 'delivery-worker', {
      WEBHOOK_SECRETS_KEY: secretsKey,
      ALLOW_LOOPBACK_TARGETS: 'true',
      USAGE_FLUSH_MS: '200',
      DELIVERY_PARTITION: `${deliveryRouteOf(target, deployment.deliveryPartitions)}/${deployment.deliveryPartitions}`,
    });
    await start('chain-indexer', 'chain-indexer', {
      NETWORKS: 'eth-mainnet',
      UPSTREAMS: JSON.stringify({ 'eth-mainnet': [anvil.url] }),
      POLL_INTERVAL_MS: '200',
    });
    // audit-api: ready means its revocation mirror loaded as its user.
    await start('audit-api', 'audit-api', {});
    const created = await fetch(`${matcherUrl}/api/v1/webhooks`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${account.key}`,
        'content-type': 'application/json',
        'idempotency-key': 'nats-permissions',
      },
      body: JSON.stringify({
        network: 'eth-mainnet',
        trigger_type: 'address_activity',
        addresses: [WATCHED],
        confirm_depth: 2,
        target_url: target,
      }),
    });
    expect([created.status, await created.text()]).toEqual([201, expect.any(String)]);
    const billedBefore = await balanceOf(account.key);
    await rpc(anvil.url, 'eth_sendTransaction', [{ from: DEPLOYER, to: WATCHED, value: '0x1' }]);
    await waitFor('a delivery at the receiver', () => received.length > 0, 60_000);
    expect(received[0]).toContain(WATCHED);
    // Every attempt is billed 25 CU: the worker's usage part applied by the ledger.
    await waitFor(
      'the delivery billed',
      async () => (await balanceOf(account.key)) <= billedBefore - 25,
      30_000,
    );
  }, 300_000);

  it('nats-server refused nothing of theirs (its log names every violation and its user)', async () => {
    // All stopped (SIGTERM: consumers drained, last usage flushed, KV watches stopped) first.
    for (const app of processes) await app.stop();
    await gateway.stop();
    await ledger.process.stop();
    const violations = serverLog
      .slice(logFrom)
      .split('\n')
      .filter((line) => /Violation/.test(line));
    expect(violations).toEqual([]);
  }, 60_000);
});

/** Polls `check` until it holds (a state of another process: no event to wait on). */
async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** A JSON-RPC call to a devnet. */
async function rpc(url: string, method: string, params: unknown[]): Promise<unknown> {
  const answer = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await answer.json()) as { result?: unknown; error?: unknown };
  if (body.error) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result;
}

/**
 * Polls `url` (an app's /readyz) until it answers 200 and the app's /metrics shows its consumers
 * attached and its KV mirrors loaded (`messagingAttached`: /readyz leaves NATS out, ADR 0212).
 */
async function ready(url: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  let last = '';
  while (Date.now() < deadline) {
    const answer = await fetch(url).catch((error: Error) => ({
      status: 0,
      text: async () => error.message,
    }));
    if (answer.status === 200) {
      if (await messagingAttached(url.replace(/\/readyz$/, ''))) return;
      last = 'ready, but a consumer or KV mirror is not attached (its /metrics)';
    } else last = `${answer.status} ${await answer.text()}`;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${url} not ready: ${last}`);
}

describe('cross-app operations are refused with a permissions violation', () => {
  const cases: Array<{
    role: NatsRole;
    what: string;
    operation: 'publish' | 'subscription';
    subject: string;
    /** The stream that would have stored it (checked: nothing stored). */
    stream?: string;
  }> = [
    {
      role: 'rpc-gateway',
      what: 'publishes a webhook delivery job',
      operation: 'publish',
      subject: ns.subject(Subjects.webhook.deliveryJob.of('r0')),
      stream: 'WEBHOOK',
    },
    {
      role: 'rpc-gateway',
      what: 'writes balance state',
      operation: 'publish',
      subject: `$KV.${ns.bucket(KvBuckets.balanceState.name)}.acct-forged`,
    },
    {
      role: 'rpc-gateway',
      what: 'deletes a revocation',
      operation: 'publish',
      subject: `$KV.${ns.bucket(KvBuckets.revokedCredentials.name)}.api_key.00ff`,
    },
    {
      role: 'rpc-gateway',
      what: "pulls the ledger's usage durable",
      operation: 'publish',
      subject: `$JS.API.CONSUMER.MSG.NEXT.${ns.stream('BILLING')}.${ns.consumer('billing-ledger-usage-p0of8')}`,
    },
    {
      role: 'rpc-gateway',
      what: 'listens to every billing event',
      operation: 'subscription',
      subject: ns.subject('billing.>'),
    },
    {
      role: 'webhook-matcher',
      what: 'publishes usage (v2)',
      operation: 'publish',
      subject: ns.subject(Subjects.billing.usageFlushedV2.of('u0')),
      stream: 'BILLING',
    },
    {
      role: 'webhook-matcher',
      what: 'publishes usage (v1, a producer id)',
      operation: 'publish',
      subject: ns.subject(Subjects.billing.usageFlushed.of('rpc-gateway-0')),
      stream: 'BILLING',
    },
    {
      role: 'webhook-matcher',
      what: 'publishes a balance change',
      operation: 'publish',
      subject: ns.subject(Subjects.billing.balanceChanged.of('acct-forged')),
      stream: 'BILLING',
    },
    {
      role: 'delivery-worker',
      what: 'publishes a webhook delivery job',
      operation: 'publish',
      subject: ns.subject(Subjects.webhook.deliveryJob.of('r1')),
      stream: 'WEBHOOK',
    },
    {
      role: 'delivery-worker',
      what: 'writes webhook status',
      operation: 'publish',
      subject: `$KV.${ns.bucket(KvBuckets.webhookStatus.name)}.wh_forged`,
    },
    {
      role: 'chain-indexer',
      what: 'publishes usage',
      operation: 'publish',
      subject: ns.subject(Subjects.billing.usageFlushedV2.of('u1')),
      stream: 'BILLING',
    },
    {
      role: 'chain-indexer',
      what: 'writes balance state',
      operation: 'publish',
      subject: `$KV.${ns.bucket(KvBuckets.balanceState.name)}.acct-forged`,
    },
    {
      role: 'audit-api',
      what: 'publishes a revocation event',
      operation: 'publish',
      subject: ns.subject(Subjects.billing.credentialRevoked.of('acct-forged')),
      stream: 'BILLING',
    },
    {
      role: 'audit-api',
      what: "reads billing-ledger's replies",
      operation: 'subscription',
      subject: '_INBOX_billing-ledger.>',
    },
    {
      role: 'billing-ledger',
      what: 'publishes canonical blocks',
      operation: 'publish',
      subject: ns.subject(Subjects.chain.block.of('eth-mainnet')),
      stream: 'CHAIN',
    },
    ...natsRoles
      .filter((role) => role !== 'provision')
      .flatMap((role) => [
        ...Object.values(Streams).map((s) => ({
          role,
          what: `deletes stream ${s.name}`,
          operation: 'publish' as const,
          subject: `$JS.API.STREAM.DELETE.${ns.stream(s.name)}`,
        })),
        {
          role,
          what: 'deletes a KV bucket',
          operation: 'publish' as const,
          subject: `$JS.API.STREAM.DELETE.KV_${ns.bucket(KvBuckets.balanceState.name)}`,
        },
        {
          role,
          what: 'purges BILLING',
          operation: 'publish' as const,
          subject: `$JS.API.STREAM.PURGE.${ns.stream('BILLING')}`,
        },
        {
          role,
          what: "deletes the ledger's usage durable",
          operation: 'publish' as const,
          subject: `$JS.API.CONSUMER.DELETE.${ns.stream('BILLING')}.${ns.consumer('billing-ledger-usage')}`,
        },
      ]),
  ];

  const intruders = new Map<NatsRole, AppClient>();
  async function as(role: NatsRole): Promise<AppClient> {
    let app = intruders.get(role);
    if (!app) {
      app = new AppClient(role);
      intruders.set(role, app);
      await app.connect();
    }
    return app;
  }

  it('no app holds the JetStream admin API, a wildcard on the bus or another inbox', () => {
    for (const role of natsRoles.filter((r) => r !== 'provision')) {
      const { publish, subscribe } = natsPermissionsOf(role, deployment);
      for (const subject of [...publish, ...subscribe]) {
        expect(subject).not.toMatch(
          /^(>|\$JS\.API\.>|\$JS\.API\.STREAM\.(CREATE|UPDATE|DELETE|PURGE))/,
        );
        expect(subject).not.toMatch(/^_INBOX\./);
      }
    }
  });

  it.each(cases)('$role $what: denied', async ({ role, operation, subject, stream }) => {
    const app = await as(role);
    const nc = await app.client.connection();
    if (operation === 'publish') nc.publish(subject, JSON.stringify(junk('forged')));
    else nc.subscribe(subject, { callback: () => undefined });
    await app.denied(operation, subject);
    if (stream) expect(await forgedStored(stream, ns.unprefixSubject(subject))).toBe(false);
  });

  it('a stream delete through the JetStream API fails, and the stream is still there', async () => {
    const app = await as('rpc-gateway');
    const jsm = await jetstreamManager(await app.client.connection(), {
      checkAPI: false,
      timeout: 2_000,
    });
    await expect(jsm.streams.delete(ns.stream('BILLING'))).rejects.toThrow();
    await app.denied('publish', `$JS.API.STREAM.DELETE.${ns.stream('BILLING')}`);
    await expect(adminJsm.streams.info(ns.stream('BILLING'))).resolves.toBeDefined();
  });
});

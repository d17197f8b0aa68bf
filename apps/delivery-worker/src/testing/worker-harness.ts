import 'reflect-metadata';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import {
  Consumers,
  Events,
  KvBuckets,
  Streams,
  balanceChangedId,
  deliveryJobId,
  deliveryJobsConsumer,
  type BalanceStateChanged,
  type ConsumerDeclaration,
  type DeliveryHealth,
  type DeliveryJob,
  type DeliveryPhase,
  type Partition,
  type UsageFlushedV2,
  unpackAccounts,
  type WebhookStatusEntry,
} from '@meridian/contracts';
import { parseConfig } from '@meridian/platform-config';
import { createAppDataSource, runMigrations } from '@meridian/platform-db';
import { createHttpApp } from '@meridian/platform-http';
import {
  JetStreamPublisher,
  NatsClient,
  NatsNamespace,
  provisionMessaging,
} from '@meridian/platform-messaging';
import {
  createTestDatabase,
  deleteNatsNamespace,
  testNatsUrl,
  uniqueNatsPrefix,
  type TestDatabase,
} from '@meridian/testing';
import { FakeClock } from '@meridian/time';
import { sealSecret } from '@meridian/platform-secrets';
import { DeliverPolicy, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import pino from 'pino';
import { DataSource } from 'typeorm';
import { AppModule } from '../app.module';
import { configSchema } from '../config/config';
import { dataSourceOptions, SCHEMA } from '../db/data-source';
import { DeliveryRuntime } from '../delivery.runtime';
import type { Resolver } from '../sending/guarded-lookup';

/** Test consumer: jobs come back quickly (recheck cap) and the poison guard stays out of the way. */
export const TEST_JOBS_CONSUMER: ConsumerDeclaration = {
  ...Consumers.workerDeliveryJobs,
  ackWaitMs: 5_000,
};

/** The test consumer of worker partition i/n (ADR 0432). */
function testJobsConsumer(partition: Partition): ConsumerDeclaration {
  return { ...deliveryJobsConsumer(partition), ackWaitMs: TEST_JOBS_CONSUMER.ackWaitMs };
}

export interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  at: number;
}

/**
 * A real HTTP receiver on loopback: answers each request with the status its path's current
 * behaviour gives (default 200) and records everything it got.
 */
export class Receiver {
  readonly received: Received[] = [];
  private readonly statuses = new Map<string, number>();
  private readonly delays = new Map<string, number>();
  private server!: Server;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = req.url ?? '/';
        this.received.push({
          path,
          headers: req.headers,
          body: Buffer.concat(chunks).toString(),
          at: Date.now(),
        });
        const status = this.statuses.get(path) ?? 200;
        const answer = () =>
          res
            .writeHead(status, { 'content-type': 'text/plain' })
            .end(`answer ${status} for ${path}`);
        const delay = this.delays.get(path) ?? 0;
        if (delay > 0) setTimeout(answer, delay);
        else answer();
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  answer(path: string, status: number): void {
    this.statuses.set(path, status);
  }

  /** Answers requests to `path` only after `ms` (a slow endpoint). */
  delay(path: string, ms: number): void {
    this.delays.set(path, ms);
  }

  at(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

export async function until<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Real time passes without the condition becoming true (the worker had many chances to act). */
export async function stillFalse(probe: () => boolean, ms = 400): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (probe()) throw new Error('condition became true');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * One isolated delivery-worker world per test file: its own database (migrated), NATS prefix
 * (WEBHOOK + BILLING streams, the jobs consumer, the webhook-status and balance buckets), a
 * FakeClock, the real app, and helpers that publish what the matcher and the ledger would.
 */
export class WorkerHarness {
  readonly clock = new FakeClock(new Date());
  readonly prefix = uniqueNatsPrefix();
  readonly secretsKey = randomBytes(32);
  db!: TestDatabase;
  dataSource!: DataSource;
  nc!: NatsConnection;
  publisher!: JetStreamPublisher;
  app: NestFastifyApplication | undefined;
  /** Every worker started (several when partitioned). */
  private readonly apps: NestFastifyApplication[] = [];
  private client!: NatsClient;
  private versions = new Map<string, number>();
  private seq = 0;

  /** `jobsConsumer`: the unpartitioned worker's consumer (e.g. fewer slots); default the test one. */
  constructor(private readonly jobsConsumer: ConsumerDeclaration = TEST_JOBS_CONSUMER) {}

  /** `partitions`: that many workers, each with its durable over its route (default one). */
  async setup(partitions = 1): Promise<void> {
    this.db = await createTestDatabase({ prefix: 'deliveries' });
    await runMigrations(createAppDataSource(dataSourceOptions(this.db.url)), SCHEMA);
    this.dataSource = createAppDataSource(dataSourceOptions(this.db.url));
    await this.dataSource.initialize();
    this.nc = await connect({ servers: testNatsUrl(), name: `worker-test-${this.prefix}` });
    await provisionMessaging(await jetstreamManager(this.nc), this.prefix, {
      streams: [Streams.WEBHOOK, Streams.BILLING],
      consumers:
        partitions > 1
          ? Array.from({ length: partitions }, (_, index) =>
              testJobsConsumer({ index, count: partitions }),
            )
          : [this.jobsConsumer],
      buckets: [KvBuckets.webhookStatus, KvBuckets.balanceState],
    });
    this.client = new NatsClient({ url: testNatsUrl(), name: `worker-test-pub-${this.prefix}` });
    await this.client.connection();
    this.publisher = new JetStreamPublisher(this.client, new NatsNamespace(this.prefix));
  }

  env(overrides: Record<string, string> = {}): Record<string, string> {
    return {
      DATABASE_URL: this.db.url,
      NATS_URL: testNatsUrl(),
      NATS_PREFIX: this.prefix,
      HTTP_PORT: '0',
      HTTP_HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      ALLOW_LOOPBACK_TARGETS: 'true',
      WEBHOOK_SECRETS_KEY: this.secretsKey.toString('base64'),
      USAGE_FLUSH_MS: '100',
      DELIVERY_RECHECK_MAX_MS: '50',
      ...overrides,
    };
  }

  /** Starts a worker; `partition` (`i/n`) makes it worker i of n, reading route i only. */
  async start(
    options: { resolver?: Resolver; env?: Record<string, string>; partition?: string } = {},
  ): Promise<DeliveryRuntime> {
    const config = parseConfig(
      configSchema,
      this.env({
        ...(options.partition ? { DELIVERY_PARTITION: options.partition } : {}),
        ...options.env,
      }),
    );
    const logger = pino({ level: config.LOG_LEVEL });
    const app = await createHttpApp(
      AppModule.forRoot(config, logger, {
        clock: this.clock,
        consumer: options.partition
          ? testJobsConsumer(config.DELIVERY_PARTITION)
          : this.jobsConsumer,
        ...(options.resolver ? { resolver: options.resolver } : {}),
      }),
      { logger },
    );
    await app.listen(0, '127.0.0.1');
    this.app = app;
    this.apps.push(app);
    return app.get(DeliveryRuntime);
  }

  async teardown(): Promise<void> {
    for (const app of this.apps) await app.close().catch(() => undefined);
    await this.client?.close();
    await this.nc?.close();
    await this.dataSource?.destroy();
    await deleteNatsNamespace(testNatsUrl(), this.prefix).catch(() => undefined);
    await this.db?.drop();
  }

  /**
   * What webhook-matcher writes after a committed change of the webhook; `seal` seals each
   * secret (default: `v1` under `secretsKey`, as before the key ring).
   */
  async putWebhook(
    webhookId: string,
    targetUrl: string,
    secrets: string[],
    status: WebhookStatusEntry['status'] = 'active',
    accountId = 'acc_1',
    seal: (secret: string) => string = (secret) => sealSecret(this.secretsKey, secret),
  ): Promise<void> {
    const version = (this.versions.get(webhookId) ?? 0) + 1;
    this.versions.set(webhookId, version);
    const entry: WebhookStatusEntry = {
      webhookId,
      accountId,
      status,
      version,
      targetUrl,
      secrets: secrets.map((s, i) => ({
        sealed: seal(s),
        expiresAt: i === 0 ? null : new Date(Date.now() + 86_400_000).toISOString(),
      })),
      updatedAt: new Date().toISOString(),
    };
    const kv = await new Kvm(this.nc).open(`${this.prefix}_${KvBuckets.webhookStatus.name}`);
    await kv.put(webhookId, JSON.stringify(entry));
  }

  /** What billing-ledger writes when an account's balance state flips. */
  async putBalance(
    accountId: string,
    state: 'ok' | 'exhausted',
    exhaustedSince?: Date,
  ): Promise<void> {
    const version = (this.versions.get(`balance:${accountId}`) ?? 0) + 1;
    this.versions.set(`balance:${accountId}`, version);
    const caps = {
      nodeRps: 25,
      accessTokens: 5,
      webhooks: {
        activeWebhooks: 10,
        addressesPerWebhook: 100_000,
        addressesPerAccount: 100_000,
        eventsPerSecond: 5,
        eventsBurst: 60,
        inlineAddresses: 1_000,
        listRefs: 10,
        addressLists: 50,
        addressesPerList: 100_000,
      },
      audit: { checksPerPeriod: 0, requestsPerSecond: 0 },
    };
    const value: BalanceStateChanged = {
      id: balanceChangedId(accountId, version),
      accountId,
      version,
      state,
      exhaustedSince:
        state === 'exhausted' ? (exhaustedSince ?? this.clock.now()).toISOString() : null,
      allowanceCu: state === 'ok' ? 1_000 : 0,
      purchasedCu: 0,
      pendingTopUpCu: 0,
      allowanceResetsAt: null,
      planId: 'starter',
      accountType: 'individual',
      nodeOwner: false,
      caps,
      at: this.clock.now().toISOString(),
    };
    const kv = await new Kvm(this.nc).open(`${this.prefix}_${KvBuckets.balanceState.name}`);
    await kv.put(accountId, JSON.stringify(value));
    // Every running worker sees it before the test goes on (a job published right after must
    // meet this state, not the one before).
    await until(() =>
      this.apps.every(
        (app) => app.get(DeliveryRuntime).balances.get(accountId)?.version === version,
      ),
    );
  }

  /** What webhook-matcher publishes for one matched event and phase. */
  async publishJob(
    webhookId: string,
    options: {
      phase?: DeliveryPhase;
      test?: boolean;
      accountId?: string;
      eventId?: string;
      route?: number;
    } = {},
  ): Promise<DeliveryJob> {
    this.seq += 1;
    const phase = options.phase ?? 'unconfirmed';
    const eventId = options.eventId ?? `ev_${this.prefix}_${this.seq}`;
    const job: DeliveryJob = {
      id: deliveryJobId(webhookId, eventId, phase),
      webhookId,
      accountId: options.accountId ?? 'acc_1',
      eventId,
      phase,
      test: options.test ?? false,
      attempt: 1,
      payload: {
        webhookId,
        eventId,
        type: 'address_activity',
        network: 'eth-mainnet',
        confirmed: phase === 'confirmed',
        removed: phase === 'removed',
        block: { number: '0x10', hash: `0x${'ab'.repeat(32)}`, timestamp: '0x6789' },
        raw: { transactionHash: `0x${'cd'.repeat(32)}` },
      },
      createdAt: this.clock.now().toISOString(),
      route: options.route ?? 0,
    };
    await this.publisher.publish(Events.deliveryJob, job);
    return job;
  }

  /** Every message stored on a subject filter of a stream, in order. */
  async stored<T>(stream: string, filter: string): Promise<T[]> {
    const jsm = await jetstreamManager(this.nc);
    const js = jsm.jetstream();
    const name = `${this.prefix}_${stream}`;
    const info = await jsm.streams.info(name);
    if (info.state.messages === 0) return [];
    // An ordered consumer over the whole stream (NATS 2.9: no filter_subjects), filtered here.
    const consumer = await js.consumers.get(name, { deliver_policy: DeliverPolicy.All });
    const wanted = `${this.prefix}.${filter.replace(/\.>$/, '.')}`;
    const out: T[] = [];
    for (;;) {
      const msg = await consumer.next({ expires: 1_000 });
      if (msg === null) break;
      if (msg.subject.startsWith(wanted)) out.push(msg.json<T>());
      if (msg.info.pending === 0) break;
    }
    return out;
  }

  /** The jobs consumer's counts on the server (what a failing test shows of the queue). */
  async jobsConsumerInfo(): Promise<Record<string, number>> {
    const jsm = await jetstreamManager(this.nc);
    const namespace = new NatsNamespace(this.prefix);
    const info = await jsm.consumers.info(
      namespace.stream(this.jobsConsumer.stream),
      namespace.consumer(this.jobsConsumer.durable),
    );
    return {
      pending: info.num_pending,
      ackPending: info.num_ack_pending,
      redelivered: info.num_redelivered,
      waiting: info.num_waiting,
      ackWaitMs: (info.config.ack_wait ?? 0) / 1e6,
    };
  }

  health(): Promise<DeliveryHealth[]> {
    return this.stored<DeliveryHealth>('WEBHOOK', 'webhook.delivery.attempted.v1.>');
  }

  /** CU the worker billed, as published on the BILLING stream (what the ledger applies). */
  async billedCu(accountId = 'acc_1'): Promise<number> {
    const parts = await this.stored<UsageFlushedV2>('BILLING', 'billing.usage.flushed.v2.>');
    const seen = new Set<string>();
    let total = 0;
    for (const part of parts) {
      if (seen.has(part.id)) continue;
      seen.add(part.id);
      for (const a of unpackAccounts(part)) if (a.accountId === accountId) total += a.totalCu;
    }
    return total;
  }

  async attemptRows(
    jobId: string,
  ): Promise<{ attempt: number; outcome: string; billed: boolean; error_class: string | null }[]> {
    return this.dataSource.query(
      `SELECT attempt, outcome, billed, error_class FROM deliveries.attempts WHERE job_id = $1 ORDER BY attempt`,
      [jobId],
    );
  }
}

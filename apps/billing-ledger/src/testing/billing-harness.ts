import 'reflect-metadata';
import {
  compactFlush,
  KvBuckets,
  ledgerUsageConsumersOf,
  Streams,
  usageFlushId,
  type ConsumerDeclaration,
  type UsageFlushed,
  type UsageFlushedV2,
  type UsageRecorded,
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
  freePort,
  messagingAttached,
  startAppProcess,
  testNatsUrl,
  uniqueNatsPrefix,
  type AppProcess,
  type TestDatabase,
} from '@meridian/testing';
import { FakeClock } from '@meridian/time';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import pino from 'pino';
import { DataSource } from 'typeorm';
import { AppModule, type AppOptions } from '../app.module';
import { configSchema, type AppConfig } from '../config/config';
import { dataSourceOptions, SCHEMA } from '../db/data-source';

export const OPERATOR_TOKEN = 'op_test_operator_token_0123456789';

/**
 * The usage durables as provisioned for tests (every one, ADR 0107): short ack wait so a lost ack
 * redelivers quickly.
 */
export const TEST_USAGE_CONSUMERS: readonly ConsumerDeclaration[] = ledgerUsageConsumersOf().map(
  (c) => ({ ...c, ackWaitMs: 2_000 }),
);

export interface BillingApp {
  app: NestFastifyApplication;
  url: string;
  config: AppConfig;
}

/**
 * One isolated billing-ledger world per test file: its own database (migrated), its own NATS
 * prefix (BILLING stream, usage consumer, billing KV buckets provisioned), a FakeClock, and
 * helpers to boot the real app, publish usage and read KV.
 */
export class BillingHarness {
  readonly clock = new FakeClock('2026-01-05T10:00:00.000Z');
  readonly prefix = uniqueNatsPrefix();
  db!: TestDatabase;
  dataSource!: DataSource;
  nc!: NatsConnection;
  publisher!: JetStreamPublisher;
  private client!: NatsClient;
  private readonly apps: NestFastifyApplication[] = [];
  private kvs = new Map<string, KV>();

  /** `consumers`: the usage durables to provision (every one by default). */
  async setup(
    consumers: ConsumerDeclaration | readonly ConsumerDeclaration[] = TEST_USAGE_CONSUMERS,
  ): Promise<void> {
    this.db = await createTestDatabase({ prefix: 'billing' });
    await runMigrations(createAppDataSource(dataSourceOptions(this.db.url)), SCHEMA);
    this.dataSource = createAppDataSource(dataSourceOptions(this.db.url));
    await this.dataSource.initialize();
    this.nc = await connect({ servers: testNatsUrl(), name: `billing-test-${this.prefix}` });
    await provisionMessaging(await jetstreamManager(this.nc), this.prefix, {
      streams: [Streams.BILLING],
      consumers: Array.isArray(consumers) ? consumers : [consumers],
      buckets: [KvBuckets.balanceState, KvBuckets.revokedCredentials],
    });
    this.client = new NatsClient({ url: testNatsUrl(), name: `billing-test-pub-${this.prefix}` });
    await this.client.connection();
    this.publisher = new JetStreamPublisher(this.client, new NatsNamespace(this.prefix));
  }

  config(overrides: Record<string, string> = {}): AppConfig {
    return parseConfig(configSchema, {
      DATABASE_URL: this.db.url,
      NATS_URL: testNatsUrl(),
      NATS_PREFIX: this.prefix,
      HTTP_PORT: '0',
      HTTP_HOST: '127.0.0.1',
      GRPC_PORT: '0',
      OPERATOR_TOKEN,
      LEDGER_TICK_MS: '0',
      LOG_LEVEL: 'silent',
      // Tests buy top-ups through the account route; the refusal is tested with 'false'.
      SELF_SERVICE_BILLING: 'true',
      ...overrides,
    });
  }

  /**
   * `options`: the consumers' backoff (`consumerBackoffMs`), the timers of the balance-state
   * publisher's usage passes (`statePassTimers`, to hold them) and where the log goes (`logTo`,
   * a pino destination; stdout by default).
   */
  async start(
    overrides: Record<string, string> = {},
    options: Pick<AppOptions, 'consumerBackoffMs' | 'statePassTimers'> & {
      logTo?: pino.DestinationStream;
    } = {},
  ): Promise<BillingApp> {
    const config = this.config(overrides);
    const logger = pino({ level: config.LOG_LEVEL }, options.logTo);
    const app = await createHttpApp(
      AppModule.forRoot(config, logger, {
        clock: this.clock,
        consumerBackoffMs: options.consumerBackoffMs,
        statePassTimers: options.statePassTimers,
      }),
      { logger },
    );
    await app.listen(0, '127.0.0.1');
    this.apps.push(app);
    const address = app.getHttpServer().address() as { port: number };
    return { app, url: `http://127.0.0.1:${address.port}`, config };
  }

  async teardown(): Promise<void> {
    for (const app of this.apps) await app.close().catch(() => undefined);
    await this.client?.close();
    await this.nc?.close();
    await this.dataSource?.destroy();
    await deleteNatsNamespace(testNatsUrl(), this.prefix).catch(() => undefined);
    await this.db?.drop();
  }

  async kv(name: string): Promise<KV> {
    let kv = this.kvs.get(name);
    if (!kv) {
      kv = await new Kvm(this.nc).open(new NatsNamespace(this.prefix).bucket(name));
      this.kvs.set(name, kv);
    }
    return kv;
  }

  async kvJson<T>(bucket: string, key: string): Promise<T | undefined> {
    const entry = await (await this.kv(bucket)).get(key);
    return entry && entry.operation === 'PUT' ? entry.json<T>() : undefined;
  }

  /** Whether the usage durables (every one by default) have nothing pending and nothing awaiting an ack. */
  async usageDrained(
    durables: readonly string[] = TEST_USAGE_CONSUMERS.map((c) => c.durable),
  ): Promise<boolean> {
    const jsm = await jetstreamManager(this.nc);
    const ns = new NatsNamespace(this.prefix);
    for (const durable of durables) {
      const info = await jsm.consumers.info(ns.stream('BILLING'), ns.consumer(durable));
      if (info.num_pending !== 0 || info.num_ack_pending !== 0) return false;
    }
    return true;
  }

  /**
   * The real app as its own process (so kill -9 is a real crash: `kill('SIGKILL')`, then
   * `exited()`), once ready; `env` adds settings.
   */
  async ledgerProcess(env: Record<string, string> = {}): Promise<AppProcess> {
    const config = this.config();
    let url = '';
    const ledger = await startAppProcess(async () => {
      const port = await freePort();
      url = `http://127.0.0.1:${port}`;
      return {
        main: 'apps/billing-ledger/src/main.ts',
        env: {
          DATABASE_URL: config.DATABASE_URL,
          NATS_URL: config.NATS_URL,
          NATS_PREFIX: config.NATS_PREFIX,
          HTTP_HOST: '127.0.0.1',
          HTTP_PORT: String(port),
          GRPC_PORT: String(await freePort()),
          OPERATOR_TOKEN,
          LEDGER_TICK_MS: '0',
          LOG_LEVEL: 'warn',
          SELF_SERVICE_BILLING: 'true',
          ...env,
        },
        healthUrl: `http://127.0.0.1:${port}/readyz`,
        startTimeoutMs: 120_000,
      };
    });
    // Its usage durables attached too: /readyz leaves NATS out (ADR 0212).
    await eventually(() => messagingAttached(url), 60_000, 'billing-ledger consumers attached');
    return ledger;
  }
}

/** `count` accounts of `plan` made through the operator's bulk API: their ids and API keys. */
export async function bulkAccounts(
  url: string,
  count: number,
  name: string,
  plan = 'starter',
): Promise<Array<{ id: string; key: string }>> {
  const created = await api<{
    items: Array<{ account: { id: string }; api_key: { key: string } }>;
  }>(url, 'POST', '/api/v1/admin/accounts/bulk', OPERATOR_TOKEN, {
    accounts: Array.from({ length: count }, (_, i) => ({ name: `${name}-${i}`, plan })),
  });
  if (created.status !== 201) throw new Error(`bulk accounts: HTTP ${created.status}`);
  return created.body.items.map((item) => ({ id: item.account.id, key: item.api_key.key }));
}

let usageSeq = 0;

/** A node usage event of `cu` CU (20 CU per call) for one account. */
export function nodeUsage(
  accountId: string,
  cu: number,
  at = '2026-01-05T10:00:00.000Z',
  producerId = 'gw-test',
): UsageRecorded {
  usageSeq += 1;
  const windowStart = new Date(new Date(at).getTime() + usageSeq).toISOString();
  return {
    id: `${producerId}:${accountId}:${windowStart}`,
    kind: 'node',
    accountId,
    producerId,
    windowStart,
    windowEnd: new Date(new Date(windowStart).getTime() + 1_000).toISOString(),
    items: [{ network: 'eth-mainnet', method: 'eth_blockNumber', calls: Math.ceil(cu / 20), cu }],
    totalCu: cu,
  };
}

export async function eventually<T>(
  probe: () => Promise<T | undefined | false>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** JSON over HTTP with a bearer token. */
export async function api<T = Record<string, unknown>>(
  url: string,
  method: string,
  path: string,
  token: string | undefined,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: T }> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
}

/** What `GET /api/v1/account/balance` answers (the fields the tests read). */
export interface AccountBalance {
  state: 'ok' | 'exhausted';
  allowance_cu: number;
  purchased_cu: number;
  overdraft_cu: number;
  pending_top_up_cu: number;
  total_cu: number;
  allowance_resets_at: string | null;
  exhausted_since: string | null;
  version: number;
}

/** The balance of the account an API key belongs to. */
export async function accountBalance(url: string, key: string): Promise<AccountBalance> {
  return (await api<AccountBalance>(url, 'GET', '/api/v1/account/balance', key)).body;
}

/** Runs `act` (a publish of usage) and waits for the account's balance at a later version. */
export async function balanceAfter(
  url: string,
  key: string,
  act: () => Promise<unknown>,
): Promise<AccountBalance> {
  const before = await accountBalance(url, key);
  await act();
  return eventually(
    async () => {
      const now = await accountBalance(url, key);
      return now.version > before.version ? now : undefined;
    },
    10_000,
    'usage applied',
  );
}

let flushSeq = 0;

/**
 * One compact usage flush part (ADR 0105: what producers publish) of `producerId` carrying node
 * usage for each `[accountId, cu]` (20 CU per call), in a window of its own.
 */
export function nodeFlush(
  accounts: ReadonlyArray<readonly [string, number]>,
  producerId = 'gw-test',
  at = '2026-01-05T10:00:00.000Z',
): UsageFlushedV2 {
  return compactFlush(nodeFlushV1(accounts, producerId, at));
}

/** The same as a v1 part (ADR 0103), as a producer not yet upgraded publishes it. */
export function nodeFlushV1(
  accounts: ReadonlyArray<readonly [string, number]>,
  producerId = 'gw-test',
  at = '2026-01-05T10:00:00.000Z',
): UsageFlushed {
  flushSeq += 1;
  const windowStart = new Date(new Date(at).getTime() + flushSeq).toISOString();
  return {
    id: usageFlushId(producerId, windowStart, 0),
    producerId,
    windowStart,
    windowEnd: new Date(new Date(windowStart).getTime() + 1_000).toISOString(),
    part: 0,
    parts: 1,
    accounts: accounts.map(([accountId, cu]) => ({
      kind: 'node' as const,
      accountId,
      items: [{ network: 'eth-mainnet', method: 'eth_blockNumber', calls: Math.ceil(cu / 20), cu }],
      totalCu: cu,
    })),
  };
}

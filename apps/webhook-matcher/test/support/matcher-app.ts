import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { createAppDataSource, runMigrations } from '@meridian/platform-db';
import { createHttpApp } from '@meridian/platform-http';
import { provisionMessaging } from '@meridian/platform-messaging';
import {
  createTestDatabase,
  deleteNatsNamespace,
  FakeClock,
  testNatsUrl,
  uniqueNatsPrefix,
  type TestDatabase,
} from '@meridian/testing';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import pino from 'pino';
import { DataSource } from 'typeorm';
import { AppModule } from '../../src/app.module';
import { configSchema, type AppConfig } from '../../src/config/config';
import { dataSourceOptions, SCHEMA } from '../../src/db/data-source';
import { StatusService } from '../../src/status/status.service';
import { startBillingLedger, type RunningBillingLedger } from './billing-ledger.process';
import type { AcceptedRequest } from './declared-bodies';

export interface Answer {
  status: number;
  body: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  headers: Record<string, string | string[] | number | undefined>;
}

export interface MatcherTestStack {
  readonly app: NestFastifyApplication;
  readonly billing: RunningBillingLedger;
  readonly db: TestDatabase;
  readonly natsPrefix: string;
  readonly clock: FakeClock;
  readonly config: AppConfig;
  readonly dataSource: DataSource;
  readonly status: StatusService;
  /**
   * Every request `call` sent that the API accepted (2xx), its body as sent: what the document's
   * request schemas must accept (`undeclaredBodies`).
   */
  readonly accepted: AcceptedRequest[];
  call(
    method: string,
    path: string,
    key: string | null,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<Answer>;
  close(): Promise<void>;
}

/**
 * A provisioned NATS namespace, the real billing-ledger on it, and webhook-matcher in-process
 * (fastify inject) on a fresh database, with loopback targets allowed and a FakeClock that
 * starts at the real time (billing's timestamps are real). `logLines`, when given, receives the
 * app's log lines from warn up (JSON text); else it logs at TEST_LOG_LEVEL (silent) to stdout.
 */
export async function startMatcherStack(
  env: Record<string, string> = {},
  billingEnv: Record<string, string> = {},
  logLines?: string[],
): Promise<MatcherTestStack> {
  const natsUrl = testNatsUrl();
  const natsPrefix = uniqueNatsPrefix();
  const nc = await connect({ servers: natsUrl });
  await provisionMessaging(await jetstreamManager(nc), natsPrefix);
  await nc.close();
  const billing = await startBillingLedger(natsPrefix, billingEnv);
  const db = await createTestDatabase({ prefix: 'wh_matcher' });
  const migrator = createAppDataSource(dataSourceOptions(db.url));
  await runMigrations(migrator, SCHEMA);
  const config = configSchema.parse({
    HTTP_PORT: '0',
    DATABASE_URL: db.url,
    NATS_URL: natsUrl,
    NATS_PREFIX: natsPrefix,
    BILLING_GRPC_URL: billing.grpcTarget,
    WEBHOOK_SECRETS_KEY: randomBytes(32).toString('base64'),
    WEBHOOK_ALLOW_LOOPBACK_TARGETS: 'true',
    WEBHOOK_KEY_CACHE_TTL_MS: '0',
    STATUS_REPUBLISH_MS: '200',
    LOG_LEVEL: 'silent',
    ...env,
  });
  const clock = new FakeClock(new Date());
  const accepted: AcceptedRequest[] = [];
  const logger = logLines
    ? pino({ level: 'warn' }, { write: (line: string) => void logLines.push(line) })
    : pino({ level: process.env['TEST_LOG_LEVEL'] ?? 'silent' });
  const app = await createHttpApp(AppModule.forRoot(config, logger, { clock }), { logger });
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  return {
    app,
    billing,
    db,
    natsPrefix,
    clock,
    config,
    dataSource: app.get(DataSource),
    status: app.get(StatusService),
    accepted,
    async call(method, path, key, body, headers = {}) {
      const response = await app.inject({
        method: method as 'GET',
        url: `/api/v1${path}`,
        headers: {
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...(key ? { authorization: `Bearer ${key}` } : {}),
          ...headers,
        },
        payload:
          body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      if (response.statusCode >= 200 && response.statusCode < 300)
        accepted.push({ method, path: `/api/v1${path}`, body: sentBody(body) });
      const answer = {
        status: response.statusCode,
        body: response.body ? (response.json() as Record<string, unknown>) : {},
      };
      // Not enumerable: a spec's toEqual({ status, body }) stays exact about those two and
      // ignores the headers (ETag, X-Request-Id, Date), which a spec reads by name.
      return Object.defineProperty(answer, 'headers', {
        value: response.headers,
        enumerable: false,
      }) as Answer;
    },
    async close() {
      await app.close();
      await billing.stop();
      await db.drop();
      await deleteNatsNamespace(natsUrl, natsPrefix);
    },
  };
}

/** A body as the API read it: a string is sent raw, so it is parsed as the API parsed it. */
function sentBody(body: unknown): unknown {
  if (typeof body !== 'string') return body;
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return body;
  }
}

/** Polls `probe` until it returns true (events travel through NATS). */
export async function eventually(probe: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await probe()) return;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export const address = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;
export const TARGET = 'https://hooks.example.com/in';

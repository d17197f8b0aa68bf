import { randomBytes } from 'node:crypto';
import { createAppDataSource, runMigrations } from '@meridian/platform-db';
import { createHttpApp } from '@meridian/platform-http';
import {
  createTestDatabase,
  startCuttableTcpRelay,
  type CuttableTcpRelay,
  type TestDatabase,
} from '@meridian/testing';
import { FakeClock } from '@meridian/time';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import pino from 'pino';
import { AppModule } from '../src/app.module';
import { configSchema } from '../src/config/config';
import { dataSourceOptions, SCHEMA } from '../src/db/data-source';
import { BffClient as Client } from './support/bff-client';

/**
 * The BFF with its Postgres out of reach (QA, failure testing: sign-in answered 500 `internal`):
 * 503 `database_unavailable` with Retry-After (libs/platform/http's filter), and the usual answer
 * once Postgres is back. Its Postgres is the test server behind a relay, cut mid-test.
 */
describe('dashboard BFF with its Postgres out of reach (real Postgres behind a relay)', () => {
  let db: TestDatabase;
  let relay: CuttableTcpRelay;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    db = await createTestDatabase({ prefix: 'dashboard' });
    await runMigrations(createAppDataSource(dataSourceOptions(db.url)), SCHEMA);
    const url = new URL(db.url);
    relay = await startCuttableTcpRelay(Number(url.port || 5432));
    url.host = `127.0.0.1:${relay.port}`;
    const config = configSchema.parse({
      HTTP_PORT: '0',
      DATABASE_URL: url.toString(),
      LOG_LEVEL: 'silent',
      BILLING_API_URL: 'http://127.0.0.1:1/api/v1',
      WEBHOOKS_API_URL: 'http://127.0.0.1:1/api/v1',
      AUDIT_API_URL: 'http://127.0.0.1:1/v1',
      OPERATOR_TOKEN: 'op_test_operator_token_0123456789',
      DASHBOARD_SECRETS_KEY: randomBytes(32).toString('base64'),
    });
    const logger = pino({ level: 'silent' });
    app = await createHttpApp(
      AppModule.forRoot(config, logger, { clock: new FakeClock('2026-03-02T08:00:00.000Z') }),
      { logger },
    );
    await app.init();
    await app.getHttpAdapter().getInstance().ready();
  }, 90_000);

  afterAll(async () => {
    await app?.close();
    await relay?.close();
    await db?.drop();
  });

  it('sign-in answers 503 database_unavailable with Retry-After while cut, and as before once back', async () => {
    const client = new Client(app, '10.9.0.1');
    const signIn = () =>
      client.call('POST', '/api/auth/sign-in', {
        email: 'nobody@example.com',
        password: 'not the password 1',
      });
    expect((await signIn()).status).toBe(401);

    await relay.cut();
    for (let i = 0; i < 2; i += 1) {
      const answer = await signIn();
      expect(answer.status).toBe(503);
      expect(answer.headers['retry-after']).toBe('2');
      expect(answer.body).toMatchObject({ error: 'database_unavailable' });
    }

    await relay.restore();
    expect((await signIn()).status).toBe(401);
  });
});

import { randomBytes } from 'node:crypto';
import { createAppDataSource, runMigrations } from '@meridian/platform-db';
import { createHttpApp } from '@meridian/platform-http';
import { createTestDatabase, type TestDatabase } from '@meridian/testing';
import { FakeClock, MINUTE } from '@meridian/time';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import pino from 'pino';
import { Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { AppModule } from '../src/app.module';
import { SessionsRetention } from '../src/auth/sessions-retention';
import { configSchema, type AppConfig } from '../src/config/config';
import { dataSourceOptions, SCHEMA } from '../src/db/data-source';

/**
 * Ended sessions (past SESSION_TTL_MS, or idle SESSION_IDLE_MS) are deleted by the periodic
 * job, not only when their cookie comes back (soak: `dashboard.sessions` grew without bound).
 */
describe('dashboard sessions retention (real Postgres, fake clock)', () => {
  let db: TestDatabase;
  let app: NestFastifyApplication;
  let config: AppConfig;
  const clock = new FakeClock('2026-03-02T08:00:00.000Z');

  beforeAll(async () => {
    db = await createTestDatabase({ prefix: 'dashboard' });
    await runMigrations(createAppDataSource(dataSourceOptions(db.url)), SCHEMA);
    config = configSchema.parse({
      HTTP_PORT: '0',
      DATABASE_URL: db.url,
      LOG_LEVEL: 'silent',
      BILLING_API_URL: 'http://127.0.0.1:1/api/v1',
      WEBHOOKS_API_URL: 'http://127.0.0.1:1/api/v1',
      AUDIT_API_URL: 'http://127.0.0.1:1/v1',
      OPERATOR_TOKEN: 'op_test_operator_token_0123456789',
      DASHBOARD_SECRETS_KEY: randomBytes(32).toString('base64'),
    });
    const logger = pino({ level: 'silent' });
    app = await createHttpApp(AppModule.forRoot(config, logger, { clock }), { logger });
    await app.init();
  }, 90_000);

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('deletes expired and idle sessions, keeps live ones, counts them', async () => {
    const ds = app.get(DataSource);
    const now = clock.now().getTime();
    await ds.query(
      `INSERT INTO dashboard.users (id, email, password_hash, role, created_at, password_changed_at)
       VALUES ('usr_ops', 'ops@example.com', 'x', 'operator', $1, $1)`,
      [new Date(now - 60 * MINUTE * 24)],
    );
    const session = (id: string, lastSeenAt: number, expiresAt: number) =>
      ds.query(
        `INSERT INTO dashboard.sessions
           (id_hash, user_id, csrf_token, created_at, last_seen_at, expires_at)
         VALUES ($1, 'usr_ops', 'csrf', $2, $2, $3)`,
        [id, new Date(lastSeenAt), new Date(expiresAt)],
      );
    const idle = config.SESSION_IDLE_MS;
    await session('expired', now - MINUTE, now - MINUTE);
    await session('idle', now - idle - MINUTE, now + 60 * MINUTE);
    await session('nearly_idle', now - idle + MINUTE, now + 60 * MINUTE);
    await session('live', now, now + 60 * MINUTE);
    const left = async () =>
      (
        (await ds.query('SELECT id_hash FROM dashboard.sessions ORDER BY id_hash')) as Array<{
          id_hash: string;
        }>
      ).map((r) => r.id_hash);
    const pruned = async () =>
      (await app.get(Registry).getSingleMetric('dashboard_sessions_pruned_total')!.get()).values[0]
        ?.value ?? 0;

    expect(await app.get(SessionsRetention).prune()).toBe(2);
    expect(await left()).toEqual(['live', 'nearly_idle']);
    expect(await pruned()).toBe(2);

    clock.advance(2 * MINUTE);
    expect(await app.get(SessionsRetention).prune()).toBe(1);
    expect(await left()).toEqual(['live']);
    expect(await pruned()).toBe(3);
  });
});

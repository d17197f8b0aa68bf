import { createAppDataSource, runMigrations } from '@meridian/platform-db';
import { createHttpApp } from '@meridian/platform-http';
import { ReadinessRegistry } from '@meridian/platform-observability';
import { testDatabaseAdminUrl } from '@meridian/testing';
import { HOUR } from '@meridian/time';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Client } from 'pg';
import pino from 'pino';
import { DataSource } from 'typeorm';
import { AppModule } from '../app.module';
import { dataSourceOptions, SCHEMA } from '../db/data-source';
import { BillingHarness } from '../testing/billing-harness';
import { HourlyFolder } from '../usage/hourly-folder.service';
import { LedgerTicker } from './ledger-ticker.service';
import { UsageJournalRetention } from './usage-journal-retention';

/**
 * QA: under a wrong DATABASE_URL the one line naming the cause was followed by "ledger tick
 * failed: Driver not Connected" (and the state publisher's, the retention's, the fold's) every
 * second, which scrolled the cause away. The app is started against a database that does not
 * exist yet, as a log would read it (pino lines captured, as the db lib's connect-log fixture
 * does), and its periodic jobs are driven pass by pass, the clock moved an hour each: the cause
 * stays the only warning, readiness says not ready; once the database exists and /readyz's retry
 * connects, the same jobs run and make what was owed.
 */
describe('billing-ledger jobs while Postgres is not connected (real Postgres + NATS, fake clock)', () => {
  const h = new BillingHarness();
  let app: NestFastifyApplication;
  let late: { url: string; name: string };
  const lines: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    await h.setup();
    const url = new URL(h.db.url);
    const name = `${h.db.name}_late`;
    url.pathname = `/${name}`;
    late = { url: url.toString(), name };
    const logger = pino(
      { level: 'info' },
      { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
    );
    const config = h.config({ DATABASE_URL: late.url, LOG_LEVEL: 'info', REQUEST_LOGS: 'false' });
    app = await createHttpApp(AppModule.forRoot(config, logger, { clock: h.clock }), { logger });
    await app.init();
  });

  afterAll(async () => {
    await app?.close();
    await h.teardown();
    await admin((client) => client.query(`DROP DATABASE IF EXISTS "${late.name}" WITH (FORCE)`));
  });

  async function admin<T>(run: (client: Client) => Promise<T>): Promise<T> {
    const client = new Client({ connectionString: testDatabaseAdminUrl() });
    await client.connect();
    try {
      return await run(client);
    } finally {
      await client.end();
    }
  }

  /** One pass of each job the app's timers run, at the clock's time. */
  async function jobsPass(): Promise<void> {
    await app.get(LedgerTicker).tick();
    await app.get(HourlyFolder).foldStep();
    await app.get(UsageJournalRetention).maintain(h.clock.now());
  }

  const warnings = () =>
    lines.filter((line) => Number(line['level']) >= 40).map((line) => String(line['msg']));

  it('the jobs log nothing after the cause until it connects, then run and make what was owed', async () => {
    const readiness = app.get(ReadinessRegistry);
    for (let pass = 0; pass < 10; pass++) {
      h.clock.advance(HOUR);
      await jobsPass();
      expect((await readiness.report()).ready).toBe(false);
    }
    expect(warnings()).toEqual([
      expect.stringContaining(`Postgres connection failed: database "${late.name}" does not exist`),
    ]);

    await admin((client) => client.query(`CREATE DATABASE "${late.name}"`));
    await runMigrations(createAppDataSource(dataSourceOptions(late.url)), SCHEMA);
    expect((await readiness.report()).ready).toBe(true);
    await jobsPass();
    // The hour's retention was owed: today's partition and the days ahead are made now.
    const made = (await app
      .get(DataSource)
      .query(
        `SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = 'billing.usage_journal'::regclass`,
      )) as Array<{ n: number }>;
    expect(made[0]!.n).toBeGreaterThan(0);
    expect(warnings()).toHaveLength(1);
    expect(lines.map((line) => line['msg'])).toContain('Postgres connected');
  });
});

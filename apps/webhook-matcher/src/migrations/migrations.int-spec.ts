import { createAppDataSource, runMigrations } from '@meridian/platform-db';
import { createTestDatabase, type TestDatabase } from '@meridian/testing';
import { previousSecretsOf } from '../webhooks/previous-secrets';
import type { DataSource } from 'typeorm';
import { DeliveriesRepository } from '../deliveries/deliveries.repository';
import { PreviousSecrets1765500000000 } from './1765500000000-previous-secrets';
import { DeliveryAttemptsByTime1766000000000 } from './1766000000000-delivery-attempts-by-time';
import { dataSourceOptions, MIGRATIONS, SCHEMA } from '../db/data-source';

describe('webhooks schema migrations', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ prefix: 'wh_migrations' });
  });
  afterAll(() => db.drop());

  it('applies once, then nothing is pending; the change feed records the writing transaction', async () => {
    const ds = createAppDataSource(dataSourceOptions(db.url));
    await ds.initialize();
    try {
      expect((await runMigrations(ds, SCHEMA)).length).toBeGreaterThan(0);
      expect(await runMigrations(ds, SCHEMA)).toEqual([]);
      const rows: Array<{ same: boolean }> = await ds.transaction(async (m) => {
        await m.query(
          `INSERT INTO webhooks.change_log (account_id, webhook_id) VALUES ('a', 'wh_1')`,
        );
        return m.query(
          `SELECT xid = pg_current_xact_id() AS same FROM webhooks.change_log WHERE webhook_id = 'wh_1'`,
        );
      });
      expect(rows[0]!.same).toBe(true);
    } finally {
      await ds.destroy();
    }
  });

  it('PreviousSecrets: a previous secret of the first schema is in the list, and down leaves it in its columns', async () => {
    const before = MIGRATIONS.slice(0, MIGRATIONS.indexOf(PreviousSecrets1765500000000));
    const db2 = await createTestDatabase({ prefix: 'wh_migrations_prev' });
    const ds = createAppDataSource({ ...dataSourceOptions(db2.url), migrations: before });
    await ds.initialize();
    try {
      await runMigrations(ds, SCHEMA);
      const expiresAt = new Date('2026-12-01T00:00:00.123Z');
      await ds.query(
        `INSERT INTO webhooks.webhooks (id, account_id, status, chain, network, trigger_type,
           filter_tree, inline_address_count, confirm_depth, phases, target_url, secret_sealed,
           previous_secret_sealed, previous_secret_expires_at, created_at, updated_at)
         VALUES ('wh_a', 'acc', 'active', 'eth', 'eth-mainnet', 'address_activity', '{}', 0, 2,
           '{confirmed}', 'https://x.example.com', 'v2.k.c', 'v2.k.p', $1, now(), now()),
                ('wh_b', 'acc', 'active', 'eth', 'eth-mainnet', 'address_activity', '{}', 0, 2,
           '{confirmed}', 'https://x.example.com', 'v2.k.c', NULL, NULL, now(), now())`,
        [expiresAt],
      );
      const migration = new PreviousSecrets1765500000000();
      const runner = ds.createQueryRunner();
      try {
        await migration.up(runner);
        const rows: Array<{
          id: string;
          previous_secrets: Array<{ sealed: string; expires_at: string }>;
        }> = await runner.query(
          `SELECT id, previous_secrets, previous_secret_sealed, previous_secret_expires_at
               FROM webhooks.webhooks ORDER BY id`,
        );
        expect(rows.map((r) => r.previous_secrets.length)).toEqual([1, 0]);
        expect(
          previousSecretsOf({
            ...rows[0]!,
            previous_secret_sealed: null,
            previous_secret_expires_at: null,
          }),
        ).toEqual([{ sealed: 'v2.k.p', expiresAt }]);
        await migration.down(runner);
        const [a] = await runner.query(
          `SELECT previous_secret_sealed, previous_secret_expires_at FROM webhooks.webhooks WHERE id = 'wh_a'`,
        );
        expect(a).toEqual({
          previous_secret_sealed: 'v2.k.p',
          previous_secret_expires_at: expiresAt,
        });
      } finally {
        await runner.release();
      }
    } finally {
      await ds.destroy();
      await db2.drop();
    }
  });

  it("DeliveryAttemptsByTime: the log's since/until query reads delivery_attempts_at; down drops it", async () => {
    const db3 = await createTestDatabase({ prefix: 'wh_migrations_at' });
    const ds = createAppDataSource(dataSourceOptions(db3.url));
    await ds.initialize();
    try {
      await runMigrations(ds, SCHEMA);
      // 40,000 rows: 40 webhooks, 30 days, a quarter of them successes.
      await ds.query(
        `INSERT INTO webhooks.delivery_attempts (id, webhook_id, account_id, event_id, phase,
           attempt, outcome, billed, final, test, at)
         SELECT 'att_' || i, 'wh_' || (i % 40), 'acc', 'ev_' || i, 'confirmed', 1,
                CASE WHEN i % 4 = 0 THEN 'success' ELSE 'failure' END, true, false, false,
                timestamptz '2026-11-01T00:00:00Z' + (i * interval '30 days' / 40000)
           FROM generate_series(1, 40000) i`,
      );
      await ds.query(`ANALYZE webhooks.delivery_attempts`);
      // The repository's own query, explained: its SQL and parameters as the route sends them.
      const explained = new DeliveriesRepository({
        query: (sql: string, params: unknown[]) => ds.query(`EXPLAIN (FORMAT JSON) ${sql}`, params),
      } as unknown as DataSource);
      const indexesRead = async (filter: { outcomes?: ['success'] }) => {
        const { items } = await explained.attemptsPage(
          'wh_7',
          {
            since: new Date('2026-11-10T00:00:00Z'),
            until: new Date('2026-11-11T00:00:00Z'),
            ...filter,
          },
          50,
          undefined,
        );
        const names = new Set<string>();
        const walk = (node: Record<string, unknown>): void => {
          if (typeof node['Index Name'] === 'string') names.add(node['Index Name']);
          for (const child of (node['Plans'] as Record<string, unknown>[] | undefined) ?? [])
            walk(child);
        };
        const [plan] = (
          items[0] as unknown as { 'QUERY PLAN': { Plan: Record<string, unknown> }[] }
        )['QUERY PLAN'];
        walk(plan!.Plan);
        return [...names];
      };
      expect(await indexesRead({})).toContain('delivery_attempts_at');
      expect(await indexesRead({ outcomes: ['success'] })).toContain('delivery_attempts_at');

      const migration = new DeliveryAttemptsByTime1766000000000();
      const runner = ds.createQueryRunner();
      try {
        await migration.down(runner);
        expect(await indexesRead({})).not.toContain('delivery_attempts_at');
        await migration.up(runner);
        expect(await indexesRead({})).toContain('delivery_attempts_at');
      } finally {
        await runner.release();
      }
    } finally {
      await ds.destroy();
      await db3.drop();
    }
  });
});

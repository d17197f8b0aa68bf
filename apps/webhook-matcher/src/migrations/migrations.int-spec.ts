import { createAppDataSource, runMigrations } from '@meridian/platform-db';
import { createTestDatabase, type TestDatabase } from '@meridian/testing';
import { dataSourceOptions, SCHEMA } from '../db/data-source';

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
});

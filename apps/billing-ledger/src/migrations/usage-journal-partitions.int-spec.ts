import { createAppDataSource, runMigrations } from '@meridian/platform-db';
import { createTestDatabase, type TestDatabase } from '@meridian/testing';
import { dataSourceOptions, SCHEMA } from '../db/data-source';
import { UsageJournalPartitions1764800000000 } from './1764800000000-usage-journal-partitions';
import { UsageRetirementChunks1764900000000 } from './1764900000000-usage-retirement-chunks';

describe('billing migration: usage journals move to day partitions (real Postgres)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ prefix: 'billing_migrations' });
  });
  afterAll(() => db.drop());

  it('moves the usage journals of a ledger that had them, ids and entries kept, and leaves the rest; the ledger reads the same', async () => {
    const options = dataSourceOptions(db.url);
    const all = options.migrations as Function[]; // eslint-disable-line @typescript-eslint/no-unsafe-function-type
    const before = createAppDataSource({
      ...options,
      migrations: all.filter(
        (m) =>
          m !== UsageJournalPartitions1764800000000 && m !== UsageRetirementChunks1764900000000,
      ),
    });
    await before.initialize();
    const ledger = `SELECT j.id::text, j.idempotency_key, j.kind, e.ledger, e.amount_cu::int
                      FROM billing.%J j JOIN billing.%E e ON e.journal_id = j.id ORDER BY e.id`;
    let old: unknown[];
    try {
      await runMigrations(before, SCHEMA);
      await before.query(`
        WITH j AS (
          INSERT INTO billing.ledger_journal (idempotency_key, account_id, kind, amount_cu, occurred_at)
          VALUES ('flush:bat_1:acc_a', 'acc_a', 'usage', 30, '2026-03-02T10:00:01Z'),
                 ('topup:tu_1', 'acc_a', 'topup_created', 100, '2026-03-02T10:00:02Z')
          RETURNING id, kind)
        INSERT INTO billing.ledger_entries (journal_id, account_id, ledger, amount_cu)
        SELECT id, 'acc_a', l, a FROM j,
               LATERAL (VALUES ('allowance', -30), ('usage', 30)) AS p(l, a) WHERE kind = 'usage'
        UNION ALL
        SELECT id, 'acc_a', l, a FROM j,
               LATERAL (VALUES ('topup_source', -100), ('pending', 100)) AS p(l, a) WHERE kind <> 'usage'`);
      old = await before.query(
        ledger.replace('%J', 'ledger_journal').replace('%E', 'ledger_entries'),
      );
      expect(old).toHaveLength(4);
    } finally {
      await before.destroy();
    }

    const after = createAppDataSource(options);
    await after.initialize();
    try {
      expect(await runMigrations(after, SCHEMA)).toEqual([
        'UsageJournalPartitions1764800000000',
        'UsageRetirementChunks1764900000000',
      ]);
      expect(await after.query(ledger.replace('%J', 'journals').replace('%E', 'entries'))).toEqual(
        old,
      );
      expect(
        await after.query(
          `SELECT kind, count(*)::int AS n FROM billing.ledger_journal GROUP BY kind
           UNION ALL SELECT 'usage_journal', count(*)::int FROM billing.usage_journal
           UNION ALL SELECT 'usage_entries', count(*)::int FROM billing.usage_entries`,
        ),
      ).toEqual([
        { kind: 'topup_created', n: 1 },
        { kind: 'usage_journal', n: 1 },
        { kind: 'usage_entries', n: 2 },
      ]);
      // From now on a usage journal has one place: the other table refuses it.
      await expect(
        after.query(
          `INSERT INTO billing.ledger_journal (idempotency_key, account_id, kind, amount_cu, occurred_at)
           VALUES ('usage:x', 'acc_a', 'usage', 1, now())`,
        ),
      ).rejects.toThrow(/ledger_journal_kind_check/);
    } finally {
      await after.destroy();
    }
  });
});

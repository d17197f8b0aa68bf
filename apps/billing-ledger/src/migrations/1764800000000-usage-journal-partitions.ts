import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Usage journals and their entries move to tables partitioned by the day they occurred
 * (`billing.usage_journal`, `billing.usage_entries`; ADR 0104 "Storage"), so that a day past the
 * retention is summarised per account and ledger into `billing.usage_summaries` and dropped as a
 * whole (`UsageJournalRetention`), where deleting its rows one by one would cost Postgres about
 * what writing them did. Every other journal (resets, plan changes, top-ups) stays in
 * `ledger_journal` and is kept: few rows, and their keys must stay unique forever, which a
 * partitioned table cannot promise (its unique keys must hold the partition key).
 *
 * The day partitions are created by the app, a few days ahead; a row of a day without one (a
 * row this migration moves, a clock far off) goes to the default partition, and is kept and
 * summarised like any other. Journal and entry ids keep their sequences, so ids stay unique
 * across both tables. `billing.journals` and `billing.entries` are the whole ledger, for
 * `checkLedger` and anyone who reads it.
 */
export class UsageJournalPartitions1764800000000 implements MigrationInterface {
  name = 'UsageJournalPartitions1764800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE billing.usage_journal (
        id bigint NOT NULL DEFAULT nextval('billing.ledger_journal_id_seq'),
        idempotency_key text NOT NULL,
        account_id text NOT NULL,
        kind text NOT NULL CHECK (kind = 'usage'),
        amount_cu bigint NOT NULL,
        overdraft_cu bigint NOT NULL DEFAULT 0,
        occurred_at timestamptz NOT NULL,
        detail jsonb NULL,
        PRIMARY KEY (id, occurred_at),
        CONSTRAINT usage_journal_idempotency_key UNIQUE (idempotency_key, occurred_at)
      ) PARTITION BY RANGE (occurred_at)`);
    await q.query(`
      CREATE TABLE billing.usage_entries (
        id bigint NOT NULL DEFAULT nextval('billing.ledger_entries_id_seq'),
        journal_id bigint NOT NULL,
        account_id text NOT NULL,
        ledger text NOT NULL CHECK (ledger IN ('allowance', 'purchased', 'allowance_expired', 'usage')),
        amount_cu bigint NOT NULL CHECK (amount_cu <> 0),
        occurred_at timestamptz NOT NULL
      ) PARTITION BY RANGE (occurred_at)`);
    await q.query(
      `CREATE INDEX usage_entries_account ON billing.usage_entries (account_id, ledger)`,
    );
    await q.query(`CREATE INDEX usage_entries_journal ON billing.usage_entries (journal_id)`);
    await q.query(
      `CREATE TABLE billing.usage_journal_default PARTITION OF billing.usage_journal DEFAULT`,
    );
    await q.query(
      `CREATE TABLE billing.usage_entries_default PARTITION OF billing.usage_entries DEFAULT`,
    );
    await q.query(`
      CREATE TABLE billing.usage_summaries (
        day date NOT NULL,
        account_id text NOT NULL,
        ledger text NOT NULL,
        prior_of timestamptz NULL,
        amount_cu bigint NOT NULL,
        entries bigint NOT NULL
      )`);
    await q.query(
      `CREATE INDEX usage_summaries_account ON billing.usage_summaries (account_id, ledger)`,
    );
    await q.query(`
      INSERT INTO billing.usage_journal (id, idempotency_key, account_id, kind, amount_cu, overdraft_cu, occurred_at, detail)
      SELECT id, idempotency_key, account_id, kind, amount_cu, overdraft_cu, occurred_at, detail
        FROM billing.ledger_journal WHERE kind = 'usage'`);
    await q.query(`
      INSERT INTO billing.usage_entries (id, journal_id, account_id, ledger, amount_cu, occurred_at)
      SELECT e.id, e.journal_id, e.account_id, e.ledger, e.amount_cu, j.occurred_at
        FROM billing.ledger_entries e JOIN billing.ledger_journal j ON j.id = e.journal_id
       WHERE j.kind = 'usage'`);
    await q.query(`
      DELETE FROM billing.ledger_entries e USING billing.ledger_journal j
       WHERE j.id = e.journal_id AND j.kind = 'usage'`);
    await q.query(`DELETE FROM billing.ledger_journal WHERE kind = 'usage'`);
    await q.query(`
      ALTER TABLE billing.ledger_journal DROP CONSTRAINT ledger_journal_kind_check,
        ADD CONSTRAINT ledger_journal_kind_check
          CHECK (kind IN ('allowance_reset', 'plan_change', 'topup_created', 'topup_cleared'))`);
    await q.query(`
      CREATE VIEW billing.journals AS
        SELECT id, idempotency_key, account_id, kind, amount_cu, overdraft_cu, occurred_at, detail
          FROM billing.ledger_journal
        UNION ALL
        SELECT id, idempotency_key, account_id, kind, amount_cu, overdraft_cu, occurred_at, detail
          FROM billing.usage_journal`);
    await q.query(`
      CREATE VIEW billing.entries AS
        SELECT id, journal_id, account_id, ledger, amount_cu FROM billing.ledger_entries
        UNION ALL
        SELECT id, journal_id, account_id, ledger, amount_cu FROM billing.usage_entries`);
  }

  /** Brings back what is kept; retired days' journals are gone (their summaries with them). */
  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP VIEW billing.entries`);
    await q.query(`DROP VIEW billing.journals`);
    await q.query(`
      ALTER TABLE billing.ledger_journal DROP CONSTRAINT ledger_journal_kind_check,
        ADD CONSTRAINT ledger_journal_kind_check
          CHECK (kind IN ('usage', 'allowance_reset', 'plan_change', 'topup_created', 'topup_cleared'))`);
    await q.query(`
      INSERT INTO billing.ledger_journal (id, idempotency_key, account_id, kind, amount_cu, overdraft_cu, occurred_at, detail)
      SELECT id, idempotency_key, account_id, kind, amount_cu, overdraft_cu, occurred_at, detail
        FROM billing.usage_journal`);
    await q.query(`
      INSERT INTO billing.ledger_entries (id, journal_id, account_id, ledger, amount_cu)
      SELECT id, journal_id, account_id, ledger, amount_cu FROM billing.usage_entries`);
    await q.query(`DROP TABLE billing.usage_summaries`);
    await q.query(`DROP TABLE billing.usage_entries`);
    await q.query(`DROP TABLE billing.usage_journal`);
  }
}

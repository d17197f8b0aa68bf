import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Fleet usage (ADR 0104): the id of every usage flush part applied (the exactly-once record,
 * written in the transaction that moves its CU), and the entries of accounts the ledger did not
 * know when their flush was applied (parked, and dead-lettered through the outbox).
 */
export class UsageFlushes1764000000000 implements MigrationInterface {
  name = 'UsageFlushes1764000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE billing.usage_flushes (
        id text PRIMARY KEY,
        producer_id text NOT NULL,
        window_start timestamptz NOT NULL,
        window_end timestamptz NOT NULL,
        accounts integer NOT NULL,
        total_cu bigint NOT NULL,
        -- The transaction that applied it: usage journals of that batch have keys usage:<batch>:<account>.
        batch text NOT NULL,
        applied_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX usage_flushes_applied_at ON billing.usage_flushes (applied_at)`);
    await q.query(`
      CREATE TABLE billing.usage_parked (
        flush_id text NOT NULL,
        account_id text NOT NULL,
        kind text NOT NULL,
        entry jsonb NOT NULL,
        parked_at timestamptz NOT NULL,
        PRIMARY KEY (flush_id, kind, account_id)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE billing.usage_parked`);
    await q.query(`DROP TABLE billing.usage_flushes`);
  }
}

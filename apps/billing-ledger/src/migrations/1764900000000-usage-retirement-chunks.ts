import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A usage day is summed in chunks of journal ids, each its own short transaction, not in one
 * statement: at a fleet's shape a day holds ~2 billion entries, about an hour of one backend,
 * and one transaction that long would hold back every vacuum of the database (the balance rows,
 * updated many times a second, would bloat for the hour). The chunks' sums wait in
 * `usage_summaries_pending` (which `checkLedger` does not read) and `usage_retirements` keeps how
 * far each day got, so a crash resumes there; the transaction that drops the day moves its
 * pending sums into `usage_summaries` (ADR 0104 "Storage").
 */
export class UsageRetirementChunks1764900000000 implements MigrationInterface {
  name = 'UsageRetirementChunks1764900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE billing.usage_summaries_pending (LIKE billing.usage_summaries INCLUDING DEFAULTS)`,
    );
    await q.query(
      `CREATE INDEX usage_summaries_pending_day ON billing.usage_summaries_pending (day)`,
    );
    await q.query(`
      CREATE TABLE billing.usage_retirements (
        day date PRIMARY KEY,
        next_journal_id bigint NOT NULL
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE billing.usage_retirements`);
    await q.query(`DROP TABLE billing.usage_summaries_pending`);
  }
}

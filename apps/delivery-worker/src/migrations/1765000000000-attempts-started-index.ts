import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The attempt log keeps `ATTEMPT_LOG_RETENTION_DAYS` (ADR 0431 "Retention"): this index finds
 * the oldest attempts without reading the table. Built CONCURRENTLY (outside a transaction), so
 * a worker upgraded onto a log that grew for months keeps claiming attempts while it is built;
 * an invalid index left by a build that failed is dropped and built again.
 */
export class AttemptsStartedIndex1765000000000 implements MigrationInterface {
  name = 'AttemptsStartedIndex1765000000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    const [invalid]: unknown[] = await q.query(
      `SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = 'deliveries' AND c.relname = 'attempts_started' AND NOT i.indisvalid`,
    );
    if (invalid) await q.query(`DROP INDEX CONCURRENTLY deliveries.attempts_started`);
    await q.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS attempts_started ON deliveries.attempts (started_at)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS deliveries.attempts_started`);
  }
}

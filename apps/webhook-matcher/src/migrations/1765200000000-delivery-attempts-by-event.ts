import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One event's attempts, successes included (`GET /webhooks/{id}/deliveries?event_id=`: the
 * outcome of a test delivery). The log holds every outcome, successes being most rows, and the
 * other indexes leave them out, so this one reads an event's rows without scanning a webhook's.
 * Built CONCURRENTLY (outside a transaction) so outcomes keep being recorded meanwhile; an invalid
 * index left by a failed build is dropped and built again.
 */
export class DeliveryAttemptsByEvent1765200000000 implements MigrationInterface {
  name = 'DeliveryAttemptsByEvent1765200000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    const [invalid]: unknown[] = await q.query(
      `SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = 'webhooks' AND c.relname = 'delivery_attempts_event' AND NOT i.indisvalid`,
    );
    if (invalid) await q.query(`DROP INDEX CONCURRENTLY webhooks.delivery_attempts_event`);
    await q.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS delivery_attempts_event
         ON webhooks.delivery_attempts (webhook_id, event_id, seq DESC)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS webhooks.delivery_attempts_event`);
  }
}

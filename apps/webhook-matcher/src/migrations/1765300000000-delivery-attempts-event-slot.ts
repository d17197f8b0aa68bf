import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The slot of its event's budget each attempt took (`event_attempt`, 1–8, counted across the
 * event's deliveries by delivery-worker: DeliveryHealth `eventAttempt`, ADR 0431 amendment), so
 * `GET /webhooks/{id}/deliveries` shows how many of the event's 8 attempts are left. Null for a
 * drop (not an attempt) and for attempts recorded before this column or made before the worker
 * kept the budget. A nullable column without a default: no table rewrite.
 */
export class DeliveryAttemptsEventSlot1765300000000 implements MigrationInterface {
  name = 'DeliveryAttemptsEventSlot1765300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE webhooks.delivery_attempts ADD COLUMN IF NOT EXISTS event_attempt integer`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhooks.delivery_attempts DROP COLUMN IF EXISTS event_attempt`);
  }
}

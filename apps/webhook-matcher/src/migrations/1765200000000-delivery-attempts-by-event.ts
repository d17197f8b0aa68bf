import { createIndexConcurrently, dropIndexConcurrently } from '@meridian/platform-db';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One event's attempts, successes included (`GET /webhooks/{id}/deliveries?event_id=`: the
 * outcome of a test delivery). The log holds every outcome, successes being most rows, and the
 * other indexes leave them out, so this one reads an event's rows without scanning a webhook's.
 * Built CONCURRENTLY (outside a transaction) so outcomes keep being recorded meanwhile; an invalid
 * index left by a failed build is dropped and built again.
 */
const INDEX = {
  schema: 'webhooks',
  name: 'delivery_attempts_event',
  on: 'delivery_attempts (webhook_id, event_id, seq DESC)',
};

export class DeliveryAttemptsByEvent1765200000000 implements MigrationInterface {
  name = 'DeliveryAttemptsByEvent1765200000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await createIndexConcurrently(q, INDEX);
  }

  async down(q: QueryRunner): Promise<void> {
    await dropIndexConcurrently(q, INDEX);
  }
}

import { createIndexConcurrently, dropIndexConcurrently } from '@meridian/platform-db';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The attempt log keeps `ATTEMPT_LOG_RETENTION_DAYS` (ADR 0431 "Retention"): this index finds
 * the oldest attempts without reading the table. Built CONCURRENTLY (outside a transaction), so
 * a worker upgraded onto a log that grew for months keeps claiming attempts while it is built;
 * an invalid index left by a build that failed is dropped and built again.
 */
const INDEX = { schema: 'deliveries', name: 'attempts_started', on: 'attempts (started_at)' };

export class AttemptsStartedIndex1765000000000 implements MigrationInterface {
  name = 'AttemptsStartedIndex1765000000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await createIndexConcurrently(q, INDEX);
  }

  async down(q: QueryRunner): Promise<void> {
    await dropIndexConcurrently(q, INDEX);
  }
}

import { createIndexConcurrently, dropIndexConcurrently } from '@meridian/platform-db';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The delivery log's time filter (`GET /webhooks/{id}/deliveries?since=&until=`, `at`
 * inclusive; `DeliveriesRepository.attemptsPage`) had no index on (webhook_id, at): the query
 * read all of the webhook's failures (`delivery_attempts_failed`; with `outcome=success`, all its
 * rows) and tested `at` on each, so one day of a webhook with a month of log read the month.
 * This one reads the window's rows; a top-N sort by `seq` then pages them. Not partial: the
 * filter takes every outcome. Built CONCURRENTLY (outside a transaction, as `1765200000000` and
 * `1765900000000`) so outcomes keep being recorded meanwhile; an invalid index left by a failed
 * build is dropped and built again. `EXPLAIN ANALYZE` of that query (one day of one webhook's
 * failures; 40,000 rows, 40 webhooks over 30 days: `migrations.int-spec.ts`
 * "DeliveryAttemptsByTime", which checks the plan reads this index and, after `down()`, not):
 *
 *   Limit (rows=34)
 *     ->  Sort  Sort Key: seq DESC
 *       ->  Bitmap Heap Scan on delivery_attempts (rows=34)  Heap Blocks: exact=20
 *             Recheck Cond: webhook_id = 'wh_7' AND at >= '2026-11-10' AND at <= '2026-11-11'
 *             Filter: outcome <> 'success'
 *             ->  Bitmap Index Scan on delivery_attempts_at (rows=34)
 *   Execution Time: 0.170 ms
 *
 * and before it, every one of the webhook's failures read to keep 34:
 *
 *       ->  Bitmap Heap Scan on delivery_attempts (rows=34)  Heap Blocks: exact=570
 *             Recheck Cond: webhook_id = 'wh_7' AND outcome <> 'success'
 *             Filter: at >= '2026-11-10' AND at <= '2026-11-11'  Rows Removed by Filter: 966
 *             ->  Bitmap Index Scan on delivery_attempts_failed (rows=1000)
 *   Execution Time: 4.502 ms
 */
const INDEX = {
  schema: 'webhooks',
  name: 'delivery_attempts_at',
  on: 'delivery_attempts (webhook_id, at)',
};

export class DeliveryAttemptsByTime1766000000000 implements MigrationInterface {
  name = 'DeliveryAttemptsByTime1766000000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await createIndexConcurrently(q, INDEX);
  }

  async down(q: QueryRunner): Promise<void> {
    await dropIndexConcurrently(q, INDEX);
  }
}

import { createIndexConcurrently, dropIndexConcurrently } from '@meridian/platform-db';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The event summary on every delivery-log row (QA: "did you deliver tx 0xabc?" could not be
 * answered; ADR 0433): `network`, `tx_hash` and `addresses` beside the existing `block_number`,
 * and two indexes for the log's filters by transaction hash and by block, built CONCURRENTLY
 * (outside a transaction, as `1765200000000`) so outcomes keep being recorded meanwhile.
 * Backfilled only where the row holds its event (`payload`: final failures and drops); other
 * rows recorded before have no summary to derive and stay without one.
 */
export class DeliveryLogSummary1765900000000 implements MigrationInterface {
  name = 'DeliveryLogSummary1765900000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhooks.delivery_attempts
      ADD COLUMN IF NOT EXISTS network text,
      ADD COLUMN IF NOT EXISTS tx_hash text,
      ADD COLUMN IF NOT EXISTS addresses text[]`);
    // Frozen copy of `summaryOf` (deliveries/event-summary.ts) as it was when this ran.
    await q.query(`UPDATE webhooks.delivery_attempts SET
        network = payload->>'network',
        tx_hash = lower(COALESCE(payload->'raw'->>'transactionHash', payload->'raw'->>'hash')),
        addresses = ARRAY(
          SELECT DISTINCT lower(a) FROM unnest(ARRAY[
            payload->'raw'->>'from', payload->'raw'->>'to', payload->'raw'->>'address',
            payload->'decoded'->>'from', payload->'decoded'->>'to']) a
           WHERE a IS NOT NULL ORDER BY 1)
      WHERE payload IS NOT NULL AND network IS NULL`);
    for (const [name, column] of [
      ['delivery_attempts_tx', 'tx_hash'],
      ['delivery_attempts_block', 'block_number'],
    ] as const) {
      await createIndexConcurrently(q, {
        schema: 'webhooks',
        name,
        on: `delivery_attempts (webhook_id, ${column}, seq DESC) WHERE ${column} IS NOT NULL`,
      });
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await dropIndexConcurrently(q, { schema: 'webhooks', name: 'delivery_attempts_block' });
    await dropIndexConcurrently(q, { schema: 'webhooks', name: 'delivery_attempts_tx' });
    await q.query(`ALTER TABLE webhooks.delivery_attempts
      DROP COLUMN IF EXISTS addresses,
      DROP COLUMN IF EXISTS tx_hash,
      DROP COLUMN IF EXISTS network`);
  }
}

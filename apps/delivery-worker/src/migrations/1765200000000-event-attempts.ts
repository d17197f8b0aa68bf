import { createIndexConcurrently, dropIndexConcurrently } from '@meridian/platform-db';
import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Spec: "one event is attempted at most 8 times", across the event's deliveries (unconfirmed,
 * confirmed, a removal correction). Each attempt takes a slot of its event's budget:
 * `event_key` (webhook + event, and a replay's stamp: `eventAttemptsKey`) and `event_attempt`
 * (1–8), unique together, so two deliveries of one event claimed at once by two workers cannot
 * take the same slot and no event gets a ninth (ADR 0431 amendment). Attempts made before this
 * migration have neither (NULLs are outside the index): an event in flight at the upgrade gets
 * its 8 from the first attempt after it. The index is built CONCURRENTLY (outside a
 * transaction) so workers keep claiming while it is built; an invalid one left by a failed build
 * is dropped and built again. (A first version, 1765100000000, was reverted before it was
 * kept; a database that ran it already has the columns and the index, and this one finds them.)
 */
const INDEX = {
  schema: 'deliveries',
  name: 'attempts_event_budget',
  on: 'attempts (event_key, event_attempt)',
  unique: true,
};

export class EventAttempts1765200000000 implements MigrationInterface {
  name = 'EventAttempts1765200000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE deliveries.attempts
         ADD COLUMN IF NOT EXISTS event_key text,
         ADD COLUMN IF NOT EXISTS event_attempt integer CHECK (event_attempt BETWEEN 1 AND 8)`,
    );
    await createIndexConcurrently(q, INDEX);
  }

  async down(q: QueryRunner): Promise<void> {
    await dropIndexConcurrently(q, INDEX);
    await q.query(
      `ALTER TABLE deliveries.attempts DROP COLUMN IF EXISTS event_attempt, DROP COLUMN IF EXISTS event_key`,
    );
  }
}

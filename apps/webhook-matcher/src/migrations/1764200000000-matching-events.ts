import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The matcher's own tables (ADR 0421):
 * - `matching_events`: every (webhook, event) the matcher produced for a block of the last few
 *   hundred, with the body of its unconfirmed phase. It is what survives a restart: pending
 *   confirmations (state `pending` until the head reaches the webhook's depth), the events of a
 *   block a reorg removes (their `removed` jobs), and the budget decision (`dropped`) so a
 *   redelivered block is published exactly as the first time.
 * - `matching_rate_limited`: events dropped over the account's events budget, per webhook
 *   (`rate_limited_total` of GET /webhooks/{id}/stats reads it), incremented in the transaction
 *   that records the dropped events, so a redelivered block never counts twice.
 */
export class MatchingEvents1764200000000 implements MigrationInterface {
  name = 'MatchingEvents1764200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE webhooks.matching_events (
      webhook_id text NOT NULL,
      event_id text NOT NULL,
      account_id text NOT NULL,
      network text NOT NULL,
      block_number bigint NOT NULL,
      block_hash text NOT NULL,
      phases text[] NOT NULL,
      confirm_depth integer NOT NULL,
      dropped boolean NOT NULL,
      state text NOT NULL,
      payload jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (webhook_id, event_id)
    )`);
    await q.query(
      `CREATE INDEX matching_events_block ON webhooks.matching_events (network, block_hash)`,
    );
    await q.query(
      `CREATE INDEX matching_events_due ON webhooks.matching_events (network, (block_number + confirm_depth - 1)) WHERE state = 'pending'`,
    );
    await q.query(
      `CREATE INDEX matching_events_age ON webhooks.matching_events (network, block_number)`,
    );
    await q.query(`CREATE TABLE webhooks.matching_rate_limited (
      webhook_id text PRIMARY KEY,
      account_id text NOT NULL,
      rate_limited_total bigint NOT NULL DEFAULT 0,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE webhooks.matching_rate_limited`);
    await q.query(`DROP TABLE webhooks.matching_events`);
  }
}

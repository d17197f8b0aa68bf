import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Delivery outcomes as reported by delivery-worker (DeliveryHealth), one row per attempt id:
 * the id is the exactly-once record (a redelivered event changes no counter), failed rows are
 * the attempt log of GET /webhooks/{id}/deliveries, final failed rows keep the event for
 * replay. `delivery_stats` holds the counters of GET /webhooks/{id}/stats and the facts of the
 * auto-pause rule (the current run of failures).
 */
export class DeliveriesAttempts1764300000000 implements MigrationInterface {
  name = 'DeliveriesAttempts1764300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhooks.delivery_attempts (
        id text PRIMARY KEY,
        seq bigserial NOT NULL UNIQUE,
        webhook_id text NOT NULL,
        account_id text NOT NULL,
        event_id text NOT NULL,
        phase text NOT NULL,
        attempt integer NOT NULL,
        outcome text NOT NULL,
        billed boolean NOT NULL,
        final boolean NOT NULL,
        test boolean NOT NULL,
        status_code integer,
        duration_ms integer,
        error_class text,
        error text,
        response_body text,
        block_number bigint,
        payload jsonb,
        at timestamptz NOT NULL
      )`);
    await q.query(
      `CREATE INDEX delivery_attempts_failed ON webhooks.delivery_attempts (webhook_id, seq DESC) WHERE outcome <> 'success'`,
    );
    await q.query(
      `CREATE INDEX delivery_attempts_given_up ON webhooks.delivery_attempts (webhook_id, at) WHERE final AND outcome <> 'success'`,
    );
    await q.query(`
      CREATE TABLE webhooks.delivery_stats (
        webhook_id text PRIMARY KEY,
        delivered_total bigint NOT NULL DEFAULT 0,
        failed_total bigint NOT NULL DEFAULT 0,
        last_delivered_at timestamptz,
        failing_since timestamptz,
        attempts_since_failing integer NOT NULL DEFAULT 0
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE webhooks.delivery_stats`);
    await q.query(`DROP TABLE webhooks.delivery_attempts`);
  }
}

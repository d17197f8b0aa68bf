import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Replay runs (README "Delivery log, stats and replay"): one row per replayed phase of an event,
 * `given_up_seq` = the seq of the given-up attempt (the run's final failure or drop) the last
 * replay sent out again, `job_id` that replay's job, `requested_at` when it was asked for. While
 * no final outcome of the phase is recorded after `given_up_seq` the replay is still running, so
 * the phase is not given up (`DeliveriesRepository.givenUp`); the upsert that claims it
 * (`claimReplays`) lets one request of any replica win. Empty until the first replay.
 */
export class DeliveryReplays1765400000000 implements MigrationInterface {
  name = 'DeliveryReplays1765400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE IF NOT EXISTS webhooks.delivery_replays (
        webhook_id text NOT NULL,
        event_id text NOT NULL,
        phase text NOT NULL,
        given_up_seq bigint NOT NULL,
        job_id text NOT NULL,
        requested_at timestamptz NOT NULL,
        PRIMARY KEY (webhook_id, event_id, phase)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS webhooks.delivery_replays`);
  }
}

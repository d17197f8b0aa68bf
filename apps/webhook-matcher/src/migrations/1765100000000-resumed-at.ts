import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A resume by the owner says the endpoint is fixed (spec: "paused_auto | resume | endpoint fixed
 * first | active"). `webhooks.resumed_at` is the time of the last owner resume: it travels in the
 * webhook-status entry (`resumedAt`), where delivery-worker lets the next attempt through its
 * open breaker as a probe, and failed attempts made before it start no failing run of the
 * auto-pause rule (`delivery_stats`). Null until the first resume.
 */
export class ResumedAt1765100000000 implements MigrationInterface {
  name = 'ResumedAt1765100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhooks.webhooks ADD COLUMN resumed_at timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhooks.webhooks DROP COLUMN resumed_at`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The test deliveries sent (`POST /webhooks/{id}/test`), one row each, counted per webhook and
 * per account against the configured limits (`testDeliveryLimits`) by every replica alike (ADR
 * 0431 amendment "Test deliveries: free, and limited"). Rows older than the longest window are deleted by the
 * account's next test; an account keeps at most its hourly limit of them.
 */
export class TestDeliveries1765700000000 implements MigrationInterface {
  name = 'TestDeliveries1765700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE webhooks.test_deliveries (
      event_id text PRIMARY KEY,
      webhook_id text NOT NULL,
      account_id text NOT NULL,
      sent_at timestamptz NOT NULL
    )`);
    await q.query(
      `CREATE INDEX test_deliveries_webhook ON webhooks.test_deliveries (webhook_id, sent_at)`,
    );
    await q.query(
      `CREATE INDEX test_deliveries_account ON webhooks.test_deliveries (account_id, sent_at)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE webhooks.test_deliveries`);
  }
}

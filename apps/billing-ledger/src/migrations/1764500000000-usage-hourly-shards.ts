import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Recorded hourly usage split by account shard (ADR 0104, "Hourly rollups folded off the usage
 * transaction"): a usage transaction records one row per shard, and the folder folds one shard
 * at a time, spread over the fold interval, instead of all 50,000 upserts of a fleet's hour keys
 * at once (that burst was the tail of the balance-state lag). Rows recorded before this have
 * shard 0: any split of the rollups folds to the same sums.
 */
export class UsageHourlyShards1764500000000 implements MigrationInterface {
  name = 'UsageHourlyShards1764500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE billing.usage_hourly_pending ADD COLUMN shard smallint NOT NULL DEFAULT 0`,
    );
    await q.query(
      `CREATE INDEX usage_hourly_pending_shard ON billing.usage_hourly_pending (shard, id)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX billing.usage_hourly_pending_shard`);
    await q.query(`ALTER TABLE billing.usage_hourly_pending DROP COLUMN shard`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Published usage parts are kept `USAGE_PART_RETENTION_MS` and then deleted by the outbox, a
 * bounded batch a tick: this index finds the oldest published ones without reading the table.
 */
export class UsagePartsPublishedIndex1764700000000 implements MigrationInterface {
  name = 'UsagePartsPublishedIndex1764700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX usage_parts_published ON deliveries.usage_parts (published_at) WHERE published_at IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX deliveries.usage_parts_published`);
  }
}

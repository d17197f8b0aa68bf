import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every attempt row is written twice right after its insert: its outcome (the finish), then
 * its usage part. With full pages (fillfactor 100) the finish found no room on the row's page, so
 * Postgres wrote the new version elsewhere and added it to each of the table's three indexes.
 * With 30 % of each page kept free, the finish (which changes no indexed column) is a HOT update:
 * same page, no index entry. Applies to pages written from now on.
 */
export class AttemptsFillfactor1764300000000 implements MigrationInterface {
  name = 'AttemptsFillfactor1764300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE deliveries.attempts SET (fillfactor = 70)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE deliveries.attempts RESET (fillfactor)`);
  }
}

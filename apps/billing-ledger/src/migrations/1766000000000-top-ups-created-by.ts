import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Who bought a top-up (ADR 0604 amendment "Who bought a top-up"): `api_key_id`, the key the
 * account's top-up was made with, and `created_by`, the person as the operator's side names them
 * (the dashboard's user id, given by its managed key or inherited from the key's own label, as
 * for API keys). Both null on rows from before and on the operator's credits; `created_by` null
 * with a key: a key of no person (an API caller).
 */
export class TopUpsCreatedBy1766000000000 implements MigrationInterface {
  name = 'TopUpsCreatedBy1766000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE billing.top_ups ADD COLUMN api_key_id text, ADD COLUMN created_by text`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE billing.top_ups DROP COLUMN api_key_id, DROP COLUMN created_by`);
  }
}

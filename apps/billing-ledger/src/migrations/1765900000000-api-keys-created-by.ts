import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Who made an API key, as the operator's side names them (ADR 0110 amendment "A key makes keys
 * only within its own reach"): the dashboard passes its user's id when it makes a key with its
 * managed key, and a key made with a labelled key inherits the label, so the keys a removed team
 * member made, and the keys those made, are revoked together. Null: made outside the dashboard.
 */
export class ApiKeysCreatedBy1765900000000 implements MigrationInterface {
  name = 'ApiKeysCreatedBy1765900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE billing.api_keys ADD COLUMN created_by text`);
    await q.query(
      `CREATE INDEX api_keys_created_by ON billing.api_keys (account_id, created_by)
        WHERE created_by IS NOT NULL AND revoked_at IS NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX billing.api_keys_created_by`);
    await q.query(`ALTER TABLE billing.api_keys DROP COLUMN created_by`);
  }
}

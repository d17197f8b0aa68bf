import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An API key the operator's side holds for the account (the dashboard's own key, made with
 * `api_key_managed: true` on `POST /admin/accounts`): never listed by the account API, refused on
 * its DELETE (403 managed_key), revoked only through the operator API. Keys made before are not
 * flagged here: billing cannot tell the dashboard's key from an operator's first key (same name,
 * same scopes); the dashboard flags the keys it holds itself (README, "Managed keys").
 */
export class ApiKeysManaged1765600000000 implements MigrationInterface {
  name = 'ApiKeysManaged1765600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE billing.api_keys ADD COLUMN managed boolean NOT NULL DEFAULT false`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE billing.api_keys DROP COLUMN managed`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The `plan` scope (ADR 0604 amendment "A scope of its own for plan changes"): `PUT /account/plan`
 * now needs it. Every active key that holds `account` changed plans until now, so it is granted
 * `plan` here (additive): a customer's automation keeps working, and the dashboard's managed keys
 * keep every scope. Revoked keys keep the scopes they held. The scopes stay sorted, as
 * `CredentialsService` stores them. Down takes `plan` from every key (keys made with it
 * afterwards included: the older code knows no such scope).
 */
export class ApiKeysPlanScope1766100000000 implements MigrationInterface {
  name = 'ApiKeysPlanScope1766100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      UPDATE billing.api_keys
         SET scopes = ARRAY(SELECT s FROM unnest(scopes || '{plan}'::text[]) AS s ORDER BY s)
       WHERE revoked_at IS NULL AND 'account' = ANY (scopes) AND NOT 'plan' = ANY (scopes)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      UPDATE billing.api_keys SET scopes = array_remove(scopes, 'plan')
       WHERE 'plan' = ANY (scopes)`);
  }
}

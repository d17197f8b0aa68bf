import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every previous signing secret keeps signing until its own expiry (ADR 0423 amendment):
 * `previous_secrets` holds them all, `[{sealed, expires_at}]`. The columns
 * `previous_secret_sealed` / `previous_secret_expires_at` stay and keep the one with the latest
 * expiry, so a matcher pod of the previous release reads what it always did during the rolling
 * update; a rotation such a pod makes (columns only) is merged back in by `previousSecretsOf`.
 * `down` drops the list: the columns already hold what the previous release reads.
 */
export class PreviousSecrets1765500000000 implements MigrationInterface {
  name = 'PreviousSecrets1765500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE webhooks.webhooks ADD COLUMN previous_secrets jsonb NOT NULL DEFAULT '[]'::jsonb`,
    );
    await q.query(
      `UPDATE webhooks.webhooks
          SET previous_secrets = jsonb_build_array(jsonb_build_object(
                'sealed', previous_secret_sealed, 'expires_at', previous_secret_expires_at))
        WHERE previous_secret_sealed IS NOT NULL AND previous_secret_expires_at IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhooks.webhooks DROP COLUMN previous_secrets`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What an `Idempotency-Key` made, for the creates whose answer is not kept (ADR 0110 amendment
 * "Credential creates take an Idempotency-Key"): `POST /access-tokens` and `POST /api-keys`
 * write the id of the token or key their key's first use made, in the same transaction as the
 * credential, so a repeat finds it without a second credential. Null for the keys of top-ups
 * (found by `top_ups.request_key`) and of `POST /admin/accounts` (`account_requests`).
 */
export class IdempotencyKeyResults1766200000000 implements MigrationInterface {
  name = 'IdempotencyKeyResults1766200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE billing.idempotency_keys ADD COLUMN result_id text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE billing.idempotency_keys DROP COLUMN result_id`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The request an `Idempotency-Key` was first used with, as a sha256 fingerprint
 * (`requestFingerprint`): the key reused with another request is refused (409
 * `idempotency_key_reused`) instead of answering the first webhook. Webhooks created before this
 * keep null: their create body cannot be rebuilt (a PATCH may have changed the row since), so
 * their keys replay as before, for any body.
 */
export class IdempotencyRequestHash1764400000000 implements MigrationInterface {
  name = 'IdempotencyRequestHash1764400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhooks.webhooks ADD COLUMN idempotency_request_hash text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhooks.webhooks DROP COLUMN idempotency_request_hash`);
  }
}

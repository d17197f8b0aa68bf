import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The request an `Idempotency-Key` was first used with, as a sha256 fingerprint
 * (`requestFingerprint`): a key reused with another request is refused (409
 * `idempotency_key_reused`) instead of answering the first request's result. Keyed like
 * `top_ups.request_key` (per account), so the account and operator top-up routes share one key
 * space. Keys of top-ups made before this are backfilled with their request's fingerprint
 * (`top-up:<source>` and `{"cu":<cu>}`, exactly as the app computes it).
 */
export class IdempotencyKeys1765000000000 implements MigrationInterface {
  name = 'IdempotencyKeys1765000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE billing.idempotency_keys (
        account_id text NOT NULL REFERENCES billing.accounts (id),
        idempotency_key text NOT NULL,
        request_hash text NOT NULL,
        created_at timestamptz NOT NULL,
        PRIMARY KEY (account_id, idempotency_key)
      )`);
    await q.query(`
      INSERT INTO billing.idempotency_keys (account_id, idempotency_key, request_hash, created_at)
      SELECT account_id, request_key,
             encode(sha256(convert_to('top-up:' || source || E'\\n{"cu":' || cu::text || '}', 'UTF8')), 'hex'),
             created_at
        FROM billing.top_ups
       WHERE request_key IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE billing.idempotency_keys`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `Idempotency-Key` on `POST /address-lists` (QQ: a retried create made a second list), kept
 * as the webhook create keeps it: the key and the fingerprint of its request on the row, one
 * key per account (`create-idempotency.ts`). Lists made before have none.
 */
export class AddressListIdempotency1765800000000 implements MigrationInterface {
  name = 'AddressListIdempotency1765800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhooks.address_lists
      ADD COLUMN idempotency_key text,
      ADD COLUMN idempotency_request_hash text`);
    await q.query(
      `CREATE UNIQUE INDEX address_lists_idempotency ON webhooks.address_lists (account_id, idempotency_key)
        WHERE idempotency_key IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX webhooks.address_lists_idempotency`);
    await q.query(`ALTER TABLE webhooks.address_lists
      DROP COLUMN idempotency_key,
      DROP COLUMN idempotency_request_hash`);
  }
}

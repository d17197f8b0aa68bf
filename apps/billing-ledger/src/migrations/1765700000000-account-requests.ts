import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The account an `Idempotency-Key` of `POST /admin/accounts` made, and the key its latest answer
 * carried (ADR 0110 amendment): a repeat of the request answers that account with a new key and
 * revokes the one the earlier answer carried, whose secret nobody may hold (it was shown once to
 * a caller that did not keep it). The key's request fingerprint is in `idempotency_keys`, under
 * the account it made, like a top-up's.
 */
export class AccountRequests1765700000000 implements MigrationInterface {
  name = 'AccountRequests1765700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE billing.account_requests (
        idempotency_key text PRIMARY KEY,
        account_id text NOT NULL UNIQUE REFERENCES billing.accounts (id),
        api_key_id text NOT NULL REFERENCES billing.api_keys (id),
        created_at timestamptz NOT NULL,
        answered_at timestamptz NOT NULL
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE billing.account_requests`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A self-service sign-up's request for a billing account, kept from just before billing is asked
 * until the user row is written (ADR 0601 amendment): the `Idempotency-Key` it is sent with and
 * the body, so a retry after a crash, a failed insert or a lost answer sends the same request
 * again and billing answers the account it made instead of making a second one.
 */
export class DashboardSignUpRequests1764200000000 implements MigrationInterface {
  name = 'DashboardSignUpRequests1764200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE dashboard.sign_up_requests (
        email text PRIMARY KEY CHECK (email = lower(email)),
        idempotency_key text NOT NULL UNIQUE,
        body jsonb NOT NULL,
        created_at timestamptz NOT NULL
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE dashboard.sign_up_requests`);
  }
}

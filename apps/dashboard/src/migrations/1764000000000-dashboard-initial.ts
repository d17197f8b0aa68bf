import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Users (argon2id hashes; a customer's billing account and its sealed API key), sessions (sha256
 * of the cookie value only), failed sign-ins for throttling, invitations and operator settings.
 */
export class DashboardInitial1764000000000 implements MigrationInterface {
  name = 'DashboardInitial1764000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE dashboard.users (
        id text PRIMARY KEY,
        email text NOT NULL,
        password_hash text NOT NULL,
        role text NOT NULL CHECK (role IN ('customer', 'operator')),
        account_id text NULL,
        api_key_id text NULL,
        sealed_api_key text NULL,
        created_at timestamptz NOT NULL,
        password_changed_at timestamptz NOT NULL,
        CHECK (role = 'operator' OR (account_id IS NOT NULL AND sealed_api_key IS NOT NULL))
      )`);
    await q.query(`CREATE UNIQUE INDEX users_email ON dashboard.users (lower(email))`);
    await q.query(`CREATE INDEX users_account ON dashboard.users (account_id)`);
    await q.query(`
      CREATE TABLE dashboard.sessions (
        id_hash text PRIMARY KEY,
        user_id text NOT NULL REFERENCES dashboard.users (id) ON DELETE CASCADE,
        csrf_token text NOT NULL,
        created_at timestamptz NOT NULL,
        last_seen_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX sessions_user ON dashboard.sessions (user_id)`);
    await q.query(`
      CREATE TABLE dashboard.login_failures (
        key text NOT NULL,
        at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX login_failures_key_at ON dashboard.login_failures (key, at)`);
    await q.query(`
      CREATE TABLE dashboard.invitations (
        code_hash text PRIMARY KEY,
        email text NOT NULL,
        created_by text NOT NULL,
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        used_at timestamptz NULL
      )`);
    await q.query(`
      CREATE TABLE dashboard.settings (
        key text PRIMARY KEY,
        value text NOT NULL,
        updated_at timestamptz NOT NULL
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      'DROP TABLE dashboard.settings, dashboard.invitations, dashboard.login_failures, dashboard.sessions, dashboard.users',
    );
  }
}

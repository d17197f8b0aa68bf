import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Which user made or rolled an access token through the dashboard (ADR 0604 amendment "What a
 * removed member leaves behind"): removing a member lists the tokens they saw recently, for the
 * owner to roll. Tokens are the account's, not the member's: nothing is revoked by it. A row goes
 * with its user.
 */
export class DashboardAccessTokenChanges1764350000000 implements MigrationInterface {
  name = 'DashboardAccessTokenChanges1764350000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE dashboard.access_token_changes (
        token_id text PRIMARY KEY,
        account_id text NOT NULL,
        user_id text NOT NULL REFERENCES dashboard.users (id) ON DELETE CASCADE,
        change text NOT NULL CHECK (change IN ('created', 'rolled')),
        at timestamptz NOT NULL
      )`);
    await q.query(
      `CREATE INDEX access_token_changes_user ON dashboard.access_token_changes (user_id, at)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE dashboard.access_token_changes`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Teams (ADR 0604): a customer is the `owner` or a `member` of their billing account (every
 * existing customer the owner of theirs), and an invitation may name an account and a role to
 * join it with (a team invitation; the operator's sign-up invitations name none).
 */
export class DashboardTeams1764100000000 implements MigrationInterface {
  name = 'DashboardTeams1764100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE dashboard.users ADD COLUMN account_role text NULL
      CHECK (account_role IN ('owner', 'member'))`);
    await q.query(`UPDATE dashboard.users SET account_role = 'owner' WHERE role = 'customer'`);
    await q.query(`ALTER TABLE dashboard.users
      ADD CONSTRAINT users_account_role CHECK (role = 'operator' OR account_role IS NOT NULL)`);
    await q.query(`ALTER TABLE dashboard.invitations
      ADD COLUMN id text NULL UNIQUE,
      ADD COLUMN account_id text NULL,
      ADD COLUMN account_role text NULL CHECK (account_role IN ('owner', 'member')),
      ADD CONSTRAINT invitations_team CHECK ((account_id IS NULL) = (account_role IS NULL))`);
    await q.query(`CREATE INDEX invitations_account ON dashboard.invitations (account_id)
      WHERE account_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM dashboard.invitations WHERE account_id IS NOT NULL`);
    await q.query(`ALTER TABLE dashboard.invitations
      DROP COLUMN id, DROP COLUMN account_id, DROP COLUMN account_role`);
    await q.query(`DELETE FROM dashboard.users WHERE account_role = 'member'`);
    await q.query(`ALTER TABLE dashboard.users DROP COLUMN account_role`);
  }
}

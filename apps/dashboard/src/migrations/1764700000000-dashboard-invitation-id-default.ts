import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every invitation has an `id`, whoever wrote it (QA WW). A dashboard pod of the release before
 * 1764600000000, still running beside new ones during a rolling upgrade, saves its operator
 * invitations with an explicit NULL `id`, and the new pages list and revoke by id, so such an
 * invitation could not be revoked. A trigger now gives a row written without an id one of the
 * shape the app's own `newId('inv')` makes (`inv_` and 24 hex digits; a column default would not
 * do, as the old insert names the column), NULLs left before this migration are filled, and
 * `NOT NULL` keeps it so.
 */
export class DashboardInvitationIdDefault1764700000000 implements MigrationInterface {
  name = 'DashboardInvitationIdDefault1764700000000';

  async up(q: QueryRunner): Promise<void> {
    const newId = `'inv_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 24)`;
    await q.query(`UPDATE dashboard.invitations SET id = ${newId} WHERE id IS NULL`);
    await q.query(`CREATE FUNCTION dashboard.invitations_id() RETURNS trigger
      LANGUAGE plpgsql AS $$
      BEGIN
        NEW.id := coalesce(NEW.id, ${newId});
        RETURN NEW;
      END $$`);
    await q.query(`CREATE TRIGGER invitations_id BEFORE INSERT
      ON dashboard.invitations FOR EACH ROW EXECUTE FUNCTION dashboard.invitations_id()`);
    await q.query(`ALTER TABLE dashboard.invitations ALTER COLUMN id SET NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE dashboard.invitations ALTER COLUMN id DROP NOT NULL`);
    await q.query(`DROP TRIGGER invitations_id ON dashboard.invitations`);
    await q.query(`DROP FUNCTION dashboard.invitations_id()`);
  }
}

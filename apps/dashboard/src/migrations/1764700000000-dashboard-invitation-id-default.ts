import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A dashboard pod of the release before 1764600000000, still running beside new ones during a
 * rolling upgrade, writes operator invitations the new schema did not expect (QA WW). Its insert
 * names `id` and passes NULL, and the new pages list and revoke by id, so such an invitation
 * could not be revoked; and its insert's conflict clause meets the new one-pending index, so for
 * an email with a pending invitation it inserted nothing and answered 201 with a dead link.
 *
 * A trigger now takes such a row (an operator invitation without an id: the new release always
 * names one) as the old release meant it: pending invitations of its email are set aside
 * (`superseded`, as the old release allowed several and its link must work), and it gets an id
 * of the shape the app's own `newId('inv')` makes (`inv_` and 24 hex digits; a column default
 * would not do, as the old insert names the column). NULLs left before this migration are
 * filled, and `NOT NULL` keeps it so. The new release's inserts pass through unchanged.
 */
export class DashboardInvitationIdDefault1764700000000 implements MigrationInterface {
  name = 'DashboardInvitationIdDefault1764700000000';

  async up(q: QueryRunner): Promise<void> {
    const newId = `'inv_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 24)`;
    await q.query(`UPDATE dashboard.invitations SET id = ${newId} WHERE id IS NULL`);
    await q.query(`CREATE FUNCTION dashboard.invitations_id() RETURNS trigger
      LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.id IS NULL AND NEW.account_id IS NULL THEN
          UPDATE dashboard.invitations SET voided_at = NEW.created_at, void_reason = 'superseded'
           WHERE account_id IS NULL AND lower(email) = lower(NEW.email)
             AND used_at IS NULL AND voided_at IS NULL;
        END IF;
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

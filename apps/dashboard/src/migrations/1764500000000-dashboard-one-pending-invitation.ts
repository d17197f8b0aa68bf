import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One pending team invitation per (account, email) (QA QQ, Low 3): six invitations of one email
 * sent at once (or two in a row) all made links, and once one was used the others stayed
 * pending for an email that now had a user.
 *
 * - `voided_at` / `void_reason`: an invitation that can no longer be used although nobody used
 *   it: `email_has_user` (its email got a user, through another link or sign-up), `superseded`
 *   (a duplicate this migration found: the newest of each (account, email) stays) or `expired`
 *   (an expired one set aside when the same email is invited again, so the index below, which
 *   cannot read the clock, does not hold a slot for it).
 * - `invitations_one_pending`: the unique partial index the invite's insert conflicts on, so
 *   invitations sent at once make one, and the others are answered 409 `invitation_pending`.
 * - `users_void_invitations`: a trigger on a user's insert voids every unused invitation of its
 *   email (any account's, and the operator's sign-up ones): one account per user, so none of
 *   them could be used. A trigger, so that no path that makes a user (sign-up, an invitation's
 *   sign-up, an older release's pod during a rollout) can forget it.
 */
export class DashboardOnePendingInvitation1764500000000 implements MigrationInterface {
  name = 'DashboardOnePendingInvitation1764500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE dashboard.invitations
      ADD COLUMN voided_at timestamptz NULL,
      ADD COLUMN void_reason text NULL,
      ADD CONSTRAINT invitations_void CHECK (
        (voided_at IS NULL) = (void_reason IS NULL)
        AND void_reason IN ('email_has_user', 'superseded', 'expired'))`);
    await q.query(`UPDATE dashboard.invitations i SET voided_at = now(), void_reason = 'email_has_user'
      WHERE i.used_at IS NULL
        AND EXISTS (SELECT 1 FROM dashboard.users u WHERE lower(u.email) = lower(i.email))`);
    await q.query(`UPDATE dashboard.invitations i SET voided_at = now(), void_reason = 'superseded'
      FROM (SELECT code_hash, row_number() OVER (
              PARTITION BY account_id, lower(email) ORDER BY created_at DESC, code_hash) AS n
            FROM dashboard.invitations
           WHERE account_id IS NOT NULL AND used_at IS NULL AND voided_at IS NULL) ranked
      WHERE ranked.code_hash = i.code_hash AND ranked.n > 1`);
    await q.query(`CREATE UNIQUE INDEX invitations_one_pending
      ON dashboard.invitations (account_id, lower(email))
      WHERE account_id IS NOT NULL AND used_at IS NULL AND voided_at IS NULL`);
    await q.query(`CREATE FUNCTION dashboard.users_void_invitations() RETURNS trigger
      LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE dashboard.invitations SET voided_at = now(), void_reason = 'email_has_user'
         WHERE lower(email) = lower(NEW.email) AND used_at IS NULL AND voided_at IS NULL;
        RETURN NEW;
      END
      $$`);
    await q.query(`CREATE TRIGGER users_void_invitations
      AFTER INSERT ON dashboard.users FOR EACH ROW
      EXECUTE FUNCTION dashboard.users_void_invitations()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER users_void_invitations ON dashboard.users`);
    await q.query(`DROP FUNCTION dashboard.users_void_invitations()`);
    await q.query(`DROP INDEX dashboard.invitations_one_pending`);
    await q.query(`ALTER TABLE dashboard.invitations DROP CONSTRAINT invitations_void,
      DROP COLUMN void_reason, DROP COLUMN voided_at`);
  }
}

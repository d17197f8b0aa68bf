import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The operator's sign-up invitations under the rule of the team ones (migration 1764500000000,
 * QA: two `POST /api/operator/invitations` of one email made two valid links, and none could be
 * listed nor revoked, so a wrong or leaked link lived its 7 days):
 *
 * - `invitations_one_pending` now covers them too: one unique index over unused invitations of
 *   (account, email), `NULLS NOT DISTINCT`, so the operator's (no account) are one more scope
 *   of the same rule; the invite's insert conflicts on it (a burst makes one, the rest 409
 *   `invitation_pending`). Stored duplicates are set aside first (`superseded`, newest kept).
 * - Each operator invitation gets an `id` (team ones had one), which the list names and the
 *   revoke takes; the code is never shown again (only its hash is kept).
 * - `void_reason` `revoked`: an operator invitation revoked stays, set aside, so its link says
 *   it was revoked (a deleted one would read as unknown).
 */
export class DashboardOperatorInvitations1764600000000 implements MigrationInterface {
  name = 'DashboardOperatorInvitations1764600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`UPDATE dashboard.invitations
      SET id = 'inv_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 24)
      WHERE id IS NULL`);
    await q.query(`UPDATE dashboard.invitations i SET voided_at = now(), void_reason = 'superseded'
      FROM (SELECT code_hash, row_number() OVER (
              PARTITION BY lower(email) ORDER BY created_at DESC, code_hash) AS n
            FROM dashboard.invitations
           WHERE account_id IS NULL AND used_at IS NULL AND voided_at IS NULL) ranked
      WHERE ranked.code_hash = i.code_hash AND ranked.n > 1`);
    await q.query(`ALTER TABLE dashboard.invitations DROP CONSTRAINT invitations_void,
      ADD CONSTRAINT invitations_void CHECK (
        (voided_at IS NULL) = (void_reason IS NULL)
        AND void_reason IN ('email_has_user', 'superseded', 'expired', 'revoked'))`);
    await q.query(`DROP INDEX dashboard.invitations_one_pending`);
    await q.query(`CREATE UNIQUE INDEX invitations_one_pending
      ON dashboard.invitations (account_id, lower(email)) NULLS NOT DISTINCT
      WHERE used_at IS NULL AND voided_at IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX dashboard.invitations_one_pending`);
    await q.query(`CREATE UNIQUE INDEX invitations_one_pending
      ON dashboard.invitations (account_id, lower(email))
      WHERE account_id IS NOT NULL AND used_at IS NULL AND voided_at IS NULL`);
    // Before this migration a revoke deleted the invitation.
    await q.query(`DELETE FROM dashboard.invitations WHERE void_reason = 'revoked'`);
    await q.query(`ALTER TABLE dashboard.invitations DROP CONSTRAINT invitations_void,
      ADD CONSTRAINT invitations_void CHECK (
        (voided_at IS NULL) = (void_reason IS NULL)
        AND void_reason IN ('email_has_user', 'superseded', 'expired'))`);
    await q.query(`UPDATE dashboard.invitations SET id = NULL WHERE account_id IS NULL`);
  }
}

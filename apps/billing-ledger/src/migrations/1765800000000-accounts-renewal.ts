import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A paid plan's renewal anchor and the paid period an account left for Free or no plan (ADR 0109
 * amendment), as jsonb `{of, anchor, left: {anchor, end, spent} | null}` written by every plan
 * change. `of` is the plan start it was written with: a row without it (every row at this
 * migration) or whose plan an older release changed since is read as anchored at its plan start
 * with no left period, which is how both releases read it before.
 */
export class AccountsRenewal1765800000000 implements MigrationInterface {
  name = 'AccountsRenewal1765800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE billing.accounts ADD COLUMN renewal jsonb NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE billing.accounts DROP COLUMN renewal`);
  }
}

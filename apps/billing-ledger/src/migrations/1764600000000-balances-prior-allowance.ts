import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What the prior period's allowance left when the current period began, less the late usage
 * charged to it since (ADR 0108): usage metered before a reset but applied after it is charged
 * to the period it was metered in. `prior_of`: the start of the period it was kept for; a
 * remainder whose `prior_of` is not the row's `period_start` is no longer the prior's (a roll by
 * a replica of an older release, during the rolling update that brings this in, moved the
 * period on without it). NULL: the current period has no prior one (rows of this migration's
 * time included, so nothing changes for them until their next period).
 */
export class BalancesPriorAllowance1764600000000 implements MigrationInterface {
  name = 'BalancesPriorAllowance1764600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE billing.balances ADD COLUMN prior_allowance_cu bigint NULL, ADD COLUMN prior_of timestamptz NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE billing.balances DROP COLUMN prior_allowance_cu, DROP COLUMN prior_of`,
    );
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Allowance CU spent in the account's allowance chain (ADR 0109): the periods since its last
 * natural roll, linked by plan changes; a plan change grants the new plan's allowance less this.
 * `chain_of`: the period start the count is for; a count whose `chain_of` is not the row's
 * `period_start` (every row of this migration's time, or a roll by a replica of an older release
 * during the rolling update) is read as what the current allowance spent
 * (`allowance_total_cu - allowance_cu`), exact for a period granted in full.
 */
export class BalancesAllowanceChain1765500000000 implements MigrationInterface {
  name = 'BalancesAllowanceChain1765500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE billing.balances ADD COLUMN chain_spent_cu bigint NOT NULL DEFAULT 0, ADD COLUMN chain_of timestamptz NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE billing.balances DROP COLUMN chain_spent_cu, DROP COLUMN chain_of`);
  }
}

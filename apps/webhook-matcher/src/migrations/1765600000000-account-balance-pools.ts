import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * billing's pools beside the pending top-ups, so a resume at an exhausted balance can tell a
 * top-up that leaves CU to spend from one that only pays an overdraft (ADR 0401, rule 2). Rows
 * of before take 0 for both: their pending top-ups are judged as they were (any > 0 passes)
 * until billing's next balance event or gRPC answer for the account, which every resume reads.
 */
export class AccountBalancePools1765600000000 implements MigrationInterface {
  name = 'AccountBalancePools1765600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE webhooks.accounts ADD COLUMN allowance_cu bigint NOT NULL DEFAULT 0,
         ADD COLUMN purchased_cu bigint NOT NULL DEFAULT 0`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE webhooks.accounts DROP COLUMN allowance_cu, DROP COLUMN purchased_cu`,
    );
  }
}

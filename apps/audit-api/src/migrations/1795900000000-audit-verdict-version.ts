import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A cached verdict names the version of what it was computed on (the code hash for tokens), so a
 * contract redeployed at the same address is analysed again. Existing rows get '' and are
 * recomputed on their next check.
 */
export class AuditVerdictVersion1795900000000 implements MigrationInterface {
  name = 'AuditVerdictVersion1795900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE audit.verdicts ADD COLUMN version text NOT NULL DEFAULT ''`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE audit.verdicts DROP COLUMN version`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A wallet check asks whether the address created a token whose stored rug pull verdict is a
 * honeypot (honeypot_related_address, ADR 0302 amendment): the verdicts of the chain are looked
 * up by their creator, in lower case (older verdicts stored it as the node wrote it).
 */
export class AuditHoneypotCreators1796000000000 implements MigrationInterface {
  name = 'AuditHoneypotCreators1796000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX verdicts_rug_pull_creator ON audit.verdicts (chain, lower(verdict->>'creator')) WHERE product = 'rug-pull'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX audit.verdicts_rug_pull_creator`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The tokens the rug pull checker found to be honeypots, with their creators, kept whatever the
 * verdict cache keeps (`AUDIT_VERDICT_TTL_MS=0` keeps no verdict): the honeypot-creator link of
 * ADR 0302's amendment reads this table, no longer the cached verdicts. Honeypots already in the
 * cache are copied; the creator index on the cache is no longer read.
 */
export class AuditHoneypotTokens1796100000000 implements MigrationInterface {
  name = 'AuditHoneypotTokens1796100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE audit.honeypot_tokens (
      chain text NOT NULL,
      token text NOT NULL,
      creator text NOT NULL,
      version text NOT NULL,
      found_at timestamptz NOT NULL,
      PRIMARY KEY (chain, token)
    )`);
    await q.query(`CREATE INDEX honeypot_tokens_creator ON audit.honeypot_tokens (chain, creator)`);
    await q.query(
      `INSERT INTO audit.honeypot_tokens (chain, token, creator, version, found_at)
       SELECT chain, address, lower(verdict->>'creator'), version, computed_at FROM audit.verdicts
        WHERE product = 'rug-pull' AND verdict->>'creator' IS NOT NULL
          AND verdict->>'status' = 'Fraud' AND verdict->'indicators'->>'is_honeypot' = '1'`,
    );
    await q.query(`DROP INDEX audit.verdicts_rug_pull_creator`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX verdicts_rug_pull_creator ON audit.verdicts (chain, lower(verdict->>'creator')) WHERE product = 'rug-pull'`,
    );
    await q.query(`DROP TABLE audit.honeypot_tokens`);
  }
}

import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Balance rows are updated by every usage transaction that touches the account (and again when
 * the publisher marks the version published). `balances_unpublished` is a partial index whose
 * predicate reads `version` and `published_version`, so every one of those updates was a non-HOT
 * update with a new entry in each index: at a fleet's shape (10,000 busy accounts, a usage
 * transaction a second) the table and its indexes bloated by 20,000 row versions a second and
 * each transaction's lock and update slowed down with them (ADR 0104). Without that index, and
 * with room on each page, these updates are HOT (no index write); the publisher's scan for
 * unpublished versions reads the table instead (a few ms per 10,000 accounts, once a tick).
 */
export class BalancesHotUpdates1764200000000 implements MigrationInterface {
  name = 'BalancesHotUpdates1764200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX billing.balances_unpublished`);
    await q.query(`ALTER TABLE billing.balances SET (fillfactor = 50)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE billing.balances RESET (fillfactor)`);
    await q.query(
      `CREATE INDEX balances_unpublished ON billing.balances (account_id) WHERE published_version < version`,
    );
  }
}

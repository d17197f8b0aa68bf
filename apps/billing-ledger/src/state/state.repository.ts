import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { numberArray, textArray } from '../db/array-literal';
import { LedgerRepository, type BalanceRow } from '../ledger/ledger.repository';

/** Which account versions still have to reach the balance-state KV bucket and events. */
@Injectable()
export class StateRepository {
  constructor(
    private readonly dataSource: DataSource,
    private readonly ledger: LedgerRepository,
  ) {}

  /** Accounts whose version is ahead of the published one, in id order after `after` (keyset). */
  async unpublished(
    limit: number,
    after = '',
  ): Promise<Array<{ accountId: string; version: number }>> {
    const rows: Array<{ account_id: string; version: string }> = await this.dataSource.query(
      'SELECT account_id, version FROM billing.balances WHERE published_version < version AND account_id > $2 ORDER BY account_id LIMIT $1',
      [limit, after],
    );
    return rows.map((row) => ({ accountId: row.account_id, version: Number(row.version) }));
  }

  rows(accountIds: readonly string[]): Promise<BalanceRow[]> {
    return this.ledger.findMany(accountIds);
  }

  /**
   * Advances the published marker and answers the accounts it advanced. Rows locked by a running
   * ledger transaction are skipped, never waited for: the marker never holds up (or is held up
   * by) usage. The publisher remembers what it published but could not mark, so a skipped row is
   * not published again for that (ADR 0104).
   */
  async markPublished(
    rows: ReadonlyArray<{ accountId: string; version: number }>,
  ): Promise<string[]> {
    if (rows.length === 0) return [];
    const marked: Array<{ account_id: string }> = await this.dataSource.query(
      `WITH v AS (SELECT * FROM unnest($1::text[], $2::bigint[]) AS v(account_id, version)),
            free AS (SELECT b.account_id FROM billing.balances b JOIN v ON v.account_id = b.account_id
                      WHERE b.published_version < v.version
                      ORDER BY b.account_id FOR UPDATE OF b SKIP LOCKED)
       UPDATE billing.balances b SET published_version = v.version
         FROM v JOIN free ON free.account_id = v.account_id
        WHERE b.account_id = v.account_id AND b.published_version < v.version
       RETURNING b.account_id`,
      [textArray(rows.map((r) => r.accountId)), numberArray(rows.map((r) => r.version))],
    );
    return marked.map((row) => row.account_id);
  }
}

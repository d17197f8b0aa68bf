import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { LedgerRepository, type BalanceRow } from '../ledger/ledger.repository';

/** Which account versions still have to reach the balance-state KV bucket and events. */
@Injectable()
export class StateRepository {
  constructor(
    private readonly dataSource: DataSource,
    private readonly ledger: LedgerRepository,
  ) {}

  async unpublished(limit: number): Promise<BalanceRow[]> {
    const ids: Array<{ account_id: string }> = await this.dataSource.query(
      'SELECT account_id FROM billing.balances WHERE published_version < version ORDER BY account_id LIMIT $1',
      [limit],
    );
    if (ids.length === 0) return [];
    return this.ledger.findMany(ids.map((row) => row.account_id));
  }

  async markPublished(rows: ReadonlyArray<{ accountId: string; version: number }>): Promise<void> {
    if (rows.length === 0) return;
    await this.dataSource.query(
      `UPDATE billing.balances b SET published_version = v.version
         FROM unnest($1::text[], $2::bigint[]) AS v(account_id, version)
        WHERE b.account_id = v.account_id AND b.published_version < v.version`,
      [rows.map((r) => r.accountId), rows.map((r) => r.version)],
    );
  }
}

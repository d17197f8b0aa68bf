import type { BalanceRow } from '../ledger/ledger.repository';

/**
 * Committed balance rows waiting to be published, one per account: the highest version wins,
 * so successive changes of an account coalesce into its latest state.
 */
export class PendingStates {
  private readonly rows = new Map<string, BalanceRow>();

  get size(): number {
    return this.rows.size;
  }

  has(accountId: string): boolean {
    return this.rows.has(accountId);
  }

  /** Adds committed rows; an older version than the one waiting is ignored. */
  add(rows: readonly BalanceRow[]): void {
    for (const row of rows) {
      const waiting = this.rows.get(row.accountId);
      if (!waiting || waiting.version < row.version) this.rows.set(row.accountId, { ...row });
    }
  }

  /** Removes and returns up to `limit` rows (oldest added first). */
  take(limit: number): BalanceRow[] {
    const taken: BalanceRow[] = [];
    for (const [accountId, row] of this.rows) {
      if (taken.length >= limit) break;
      taken.push(row);
      this.rows.delete(accountId);
    }
    return taken;
  }
}

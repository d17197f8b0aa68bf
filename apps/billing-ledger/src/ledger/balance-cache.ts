import type { BalanceRow } from './ledger.repository';

/**
 * The balance rows (joined with their account's fields) as this process last committed them,
 * keyed by account and valid for one `version` (ADR 0106). Every change of a balance row or of
 * the account fields a BalanceRow carries goes through `saveBalances` with a new version (the
 * rule the state publisher relies on too), so a cached row whose version equals the one a
 * transaction has just locked IS that row: the transaction takes the copy instead of reading
 * and parsing the joined row again. A version it does not hold is a miss and is read as before.
 *
 * Bounded to `capacity` accounts, least recently used first out (a Map keeps insertion order;
 * a hit moves the entry to the end). Rows go in only after their transaction committed
 * (`LedgerRepository.transaction`), and an older version never replaces a newer one.
 */
export class BalanceCache {
  private readonly rows = new Map<string, BalanceRow>();
  hits = 0;
  misses = 0;

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.rows.size;
  }

  /** A copy of the cached row if it is at `version` (the caller mutates it), else undefined. */
  take(accountId: string, version: number): BalanceRow | undefined {
    const row = this.rows.get(accountId);
    if (row === undefined || row.version !== version) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    this.rows.delete(accountId);
    this.rows.set(accountId, row);
    return { ...row };
  }

  /**
   * Rows as a transaction committed them. The cache keeps these objects: pass copies no one
   * changes afterwards (`saveBalances` takes them when it writes the rows).
   */
  remember(rows: readonly BalanceRow[]): void {
    if (this.capacity === 0) return;
    for (const row of rows) {
      const cached = this.rows.get(row.accountId);
      if (cached !== undefined) {
        if (cached.version >= row.version) continue;
        this.rows.delete(row.accountId);
      }
      this.rows.set(row.accountId, row);
    }
    if (this.rows.size <= this.capacity) return;
    let over = this.rows.size - this.capacity;
    for (const accountId of this.rows.keys()) {
      if (over-- === 0) break;
      this.rows.delete(accountId);
    }
  }
}

import type { BalanceRow } from '../ledger/ledger.repository';

const NONE: ReadonlySet<string> = new Set();

/**
 * Committed balance rows waiting to be published, one per account: the highest version wins,
 * so successive changes of an account coalesce into its latest state. An account whose facts
 * changed (its ok/exhausted state flipped) owes an event besides its KV state, until taken.
 */
export class PendingStates {
  private readonly rows = new Map<string, BalanceRow>();
  private readonly announced = new Set<string>();

  get size(): number {
    return this.rows.size;
  }

  has(accountId: string): boolean {
    return this.rows.has(accountId);
  }

  /** Adds committed rows; an older version than the one waiting is ignored. */
  add(rows: readonly BalanceRow[], announce: ReadonlySet<string> = NONE): void {
    for (const row of rows) {
      if (announce.has(row.accountId)) this.announced.add(row.accountId);
      const waiting = this.rows.get(row.accountId);
      if (!waiting || waiting.version < row.version) this.rows.set(row.accountId, { ...row });
    }
  }

  /**
   * Removes and returns up to `limit` rows: those that owe an event first (an ok ↔ exhausted
   * flip, what replicas act on: it must not wait behind a fleet's worth of charges, ADR 0104),
   * then the others, oldest added first.
   */
  take(limit: number): BalanceRow[] {
    const taken: BalanceRow[] = [];
    for (const accountId of this.announced) {
      if (taken.length >= limit) return taken;
      const row = this.rows.get(accountId);
      if (row === undefined) continue;
      taken.push(row);
      this.rows.delete(accountId);
    }
    for (const [accountId, row] of this.rows) {
      if (taken.length >= limit) break;
      taken.push(row);
      this.rows.delete(accountId);
    }
    return taken;
  }

  /** Which of these (taken) rows owe an event; their debt moves to the caller. */
  takeAnnounced(rows: readonly BalanceRow[]): Set<string> {
    const out = new Set<string>();
    for (const row of rows) if (this.announced.delete(row.accountId)) out.add(row.accountId);
    return out;
  }
}

/**
 * CU an account can spend before billing-ledger calls it exhausted, from one balance state:
 * its pools are spent allowance first, then purchased CU, and the state turns `exhausted` once
 * neither is above zero (billing-ledger's `isExhausted`), so a pool already at or below zero
 * (purchased CU in debt) gives nothing and takes nothing from the other. Top-ups still pending
 * are not spendable. Every source of a state (the balance KV feed, a token's resolution) reads it
 * through this one rule.
 */
export function spendableCuOf(allowanceCu: number, purchasedCu: number): number {
  return Math.max(allowanceCu, 0) + Math.max(purchasedCu, 0);
}

/**
 * This process's estimate of what one account can still spend (ADR 0201, amendment "a local
 * estimate of spendable CU"): the spendable CU of the last balance state it took, less the CU of
 * the calls it admitted since. billing-ledger's state lags the calls by a usage flush and the
 * ledger's apply; the estimate stops this process's share of that lag at the allowance. It only
 * ever refuses more than the state does, never admits what the state refuses.
 *
 * One mutable object per account for the life of the process, so the hot path reads and
 * changes it without allocating (ADR 0207). A call is admitted while the estimate is above zero
 * and may take it below (as the ledger lets the last call overdraw rather than refuse what
 * does not fit exactly), so this process overdraws by at most one call.
 */
export class SpendEstimate {
  /** The balance-state version the estimate was last reset from (-1: none yet). */
  version = -1;
  /** Infinity while the state says nothing of the pools (a static token): nothing refused. */
  remainingCu = Number.POSITIVE_INFINITY;

  /** A newer balance state: the estimate starts again from what it says is spendable. */
  reset(version: number, spendableCu: number | undefined): void {
    this.version = version;
    this.remainingCu = spendableCu ?? Number.POSITIVE_INFINITY;
  }

  /** Whether the estimate is spent: a call is refused as exhausted. */
  get spent(): boolean {
    return this.remainingCu <= 0;
  }

  /** Admits one call of `cu` if the estimate is above zero (false: refuse it). */
  take(cu: number): boolean {
    if (this.remainingCu <= 0) return false;
    this.remainingCu -= cu;
    return true;
  }

  /**
   * A call taken under `version` turned out unbilled (no node answered, the session refused
   * it): its CU come back, unless a newer state reset the estimate meanwhile (that state knows
   * nothing of the call either way).
   */
  giveBack(version: number, cu: number): void {
    if (version === this.version) this.remainingCu += cu;
  }
}

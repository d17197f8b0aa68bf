/**
 * Pure CU arithmetic of the ledger. Pools: the plan allowance (spent first, never below zero)
 * and purchased CU (spent second; the only pool that may go negative, so an overdraft is a debt
 * the next top-up pays).
 */
export interface Pools {
  allowance: number;
  purchased: number;
}

export interface Charge {
  fromAllowance: number;
  fromPurchased: number;
  /** Part of this charge that took purchased CU below zero (usage in flight at exhaustion). */
  overdraft: number;
}

export function splitCharge(pools: Pools, cu: number): Charge {
  if (!Number.isSafeInteger(cu) || cu < 0)
    throw new RangeError(`charge must be a non-negative integer, got ${cu}`);
  const fromAllowance = Math.min(cu, Math.max(pools.allowance, 0));
  const fromPurchased = cu - fromAllowance;
  const purchasedAfter = pools.purchased - fromPurchased;
  const overdraft = purchasedAfter < 0 ? Math.min(fromPurchased, -purchasedAfter) : 0;
  return { fromAllowance, fromPurchased, overdraft };
}

export function applyCharge(pools: Pools, charge: Charge): Pools {
  return {
    allowance: pools.allowance - charge.fromAllowance,
    purchased: pools.purchased - charge.fromPurchased,
  };
}

/** Nothing left to spend in either pool. */
export function isExhausted(pools: Pools): boolean {
  return pools.allowance <= 0 && pools.purchased <= 0;
}

/**
 * exhausted_since after a change: set at the moment the balance reaches zero, kept while it
 * stays there, cleared when CU are spendable again.
 */
export function nextExhaustedSince(pools: Pools, previous: Date | null, now: Date): Date | null {
  if (!isExhausted(pools)) return null;
  return previous ?? now;
}

/** One posting of a balanced journal (amounts of a journal sum to zero). */
export interface Posting {
  ledger: LedgerName;
  amount: number;
}

export const CUSTOMER_LEDGERS = ['allowance', 'purchased', 'pending'] as const;
export type LedgerName =
  | (typeof CUSTOMER_LEDGERS)[number]
  | 'allowance_source'
  | 'allowance_expired'
  | 'topup_source'
  | 'usage';

export function usagePostings(charge: Charge): Posting[] {
  const postings: Posting[] = [];
  if (charge.fromAllowance > 0)
    postings.push(
      { ledger: 'allowance', amount: -charge.fromAllowance },
      { ledger: 'usage', amount: charge.fromAllowance },
    );
  if (charge.fromPurchased > 0)
    postings.push(
      { ledger: 'purchased', amount: -charge.fromPurchased },
      { ledger: 'usage', amount: charge.fromPurchased },
    );
  return postings;
}

/** Expire what is left of the old allowance (no rollover) and grant the new one. */
export function allowanceResetPostings(remaining: number, grant: number): Posting[] {
  const postings: Posting[] = [];
  if (remaining > 0)
    postings.push(
      { ledger: 'allowance', amount: -remaining },
      { ledger: 'allowance_expired', amount: remaining },
    );
  if (grant > 0)
    postings.push(
      { ledger: 'allowance_source', amount: -grant },
      { ledger: 'allowance', amount: grant },
    );
  return postings;
}

export function assertBalanced(postings: readonly Posting[]): void {
  const sum = postings.reduce((total, p) => total + p.amount, 0);
  if (sum !== 0) throw new Error(`unbalanced journal: postings sum to ${sum}`);
}

import { spendableCu } from '@meridian/compute-units';

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

/** Nothing left to spend in either pool. */
export function isExhausted(pools: Pools): boolean {
  return spendableCu(pools.allowance, pools.purchased) <= 0;
}

/**
 * Purchased CU as an account is shown them: the pool itself never below zero, and what usage in
 * flight took past zero (ADR 0103's flush bound) as its own debt, which the next top-up pays
 * first. The ledger keeps the one signed `purchased` pool (its invariants are on that); only the
 * views split it. CU spendable now = allowance + `purchased` here.
 */
export function purchasedAndOverdraft(purchased: number): { purchased: number; overdraft: number } {
  return purchased < 0 ? { purchased: 0, overdraft: -purchased } : { purchased, overdraft: 0 };
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

/**
 * Postings of a charge. `allowance`: what it took of an allowance comes from the current one;
 * `allowance_expired`: from what the prior period left, expired at the roll and taken back.
 */
export function usagePostings(
  charge: Charge,
  allowance: 'allowance' | 'allowance_expired' = 'allowance',
): Posting[] {
  const postings: Posting[] = [];
  if (charge.fromAllowance > 0)
    postings.push(
      { ledger: allowance, amount: -charge.fromAllowance },
      { ledger: 'usage', amount: charge.fromAllowance },
    );
  if (charge.fromPurchased > 0)
    postings.push(
      { ledger: 'purchased', amount: -charge.fromPurchased },
      { ledger: 'usage', amount: charge.fromPurchased },
    );
  return postings;
}

/** The pools a usage charge draws on: the current ones and what the prior period left. */
export interface UsagePools extends Pools {
  /**
   * What the prior period's allowance left when the current period began (expired then), less
   * the late usage charged to it since; null when the current period has no prior one (the
   * account's first, or no plan).
   */
  prior: number | null;
}

export interface UsageCharge {
  /** Late usage: metered in the prior period, charged from what it left, then purchased. */
  late: Charge;
  /** The rest, charged to the current period. */
  current: Charge;
  overdraft: number;
  postings: Posting[];
}

/**
 * When the account's current period began for it: the period's start, or the plan change that
 * began it when later (a change to Free begins Free's day at the change, while the day's window
 * started at 07:30; ADR 0109). Null without a period.
 */
export function periodBeganAt(account: {
  periodStart: Date | null;
  planStartedAt?: Date;
}): number | null {
  if (account.periodStart === null) return null;
  const start = account.periodStart.getTime();
  return Math.max(start, account.planStartedAt?.getTime() ?? start);
}

/**
 * Usage whose window ended at `windowEnd` is late: metered in the prior period of an account in
 * the period that began at `periodBeganAt`, which has one (`prior` not null; ADR 0108). A
 * window ending at the very start of the period is the prior's: nothing of it was metered in
 * the new one.
 */
export function isLateUsage(
  windowEnd: string,
  account: { prior: number | null; periodStart: Date | null; planStartedAt?: Date },
): boolean {
  const began = periodBeganAt(account);
  return account.prior !== null && began !== null && Date.parse(windowEnd) <= began;
}

/**
 * Charges usage to the period it was metered in (ADR 0108). `lateCu` of `totalCu` is usage
 * whose window ended by the start of the current period: it is charged as the prior period
 * would have charged it before its end (from the allowance it left, then purchased CU), and
 * goes first, being older. The rest is charged to the current period. Without a prior period
 * all of it is current.
 */
export function chargeUsage(pools: UsagePools, lateCu: number, totalCu: number): UsageCharge {
  if (!Number.isSafeInteger(lateCu) || lateCu < 0 || lateCu > totalCu)
    throw new RangeError(`late usage must be an integer from 0 to ${totalCu}, got ${lateCu}`);
  const lateOf = pools.prior === null ? 0 : lateCu;
  const late = splitCharge({ allowance: pools.prior ?? 0, purchased: pools.purchased }, lateOf);
  const current = splitCharge(
    { allowance: pools.allowance, purchased: pools.purchased - late.fromPurchased },
    totalCu - lateOf,
  );
  return {
    late,
    current,
    overdraft: late.overdraft + current.overdraft,
    postings: [...usagePostings(late, 'allowance_expired'), ...usagePostings(current)],
  };
}

export function applyUsageCharge(pools: UsagePools, charge: UsageCharge): UsagePools {
  return {
    allowance: pools.allowance - charge.current.fromAllowance,
    purchased: pools.purchased - charge.late.fromPurchased - charge.current.fromPurchased,
    prior: pools.prior === null ? null : pools.prior - charge.late.fromAllowance,
  };
}

/**
 * The allowance a plan change grants (ADR 0109): the new plan's allowance less what the
 * account's allowance chain has spent, never below zero. A chain is the periods since the last
 * natural roll (a renewal, Free's 07:30), linked by plan changes: so changing plans never grants
 * again what was spent, and a natural roll starts a new chain with the full allowance.
 */
export function planChangeGrant(allowance: number, chainSpent: number): number {
  return Math.max(allowance - Math.max(chainSpent, 0), 0);
}

/**
 * Allowance CU a usage charge spends of the account's allowance chain (ADR 0109): what it took
 * of the current allowance, and what it took of the prior period's remainder when that period
 * is of the same chain (the current one began with a plan change, not a natural roll).
 */
export function chainSpendOf(charge: UsageCharge, priorInChain: boolean): number {
  return charge.current.fromAllowance + (priorInChain ? charge.late.fromAllowance : 0);
}

/**
 * The part of a new allowance grant that pays the account's debt (ADR 0101 amendment): new CU
 * of any source pay what usage overdrew first, as a top-up does, so an account that never tops
 * up cannot carry a debt from period to period while getting its full allowance each time.
 */
export function debtPaidBy(grant: number, purchased: number): number {
  return Math.min(Math.max(grant, 0), Math.max(-purchased, 0));
}

/**
 * Expire what is left of the old allowance (no rollover), grant the new one, and pay the debt
 * from it (`debtPaidBy`): postings `allowance −paid`, `purchased +paid`, so the journal still
 * balances and the running sums still equal their entries.
 */
export function allowanceResetPostings(remaining: number, grant: number, debtPaid = 0): Posting[] {
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
  if (debtPaid > 0)
    postings.push(
      { ledger: 'allowance', amount: -debtPaid },
      { ledger: 'purchased', amount: debtPaid },
    );
  return postings;
}

/**
 * A paid plan's period an account left for Free or no plan (ADR 0109 amendment), kept so that
 * a return to a paid plan before `end` resumes it: its renewal anchor and what it had spent.
 */
export interface LeftPaidPeriod {
  anchor: Date;
  end: Date;
  /** Allowance CU its chain had spent when it was left. */
  spent: number;
}

export interface PlanChangeTerms {
  /** Renewal anchor of the new plan's monthly periods (kept for Free and no plan). */
  anchor: Date;
  /** What the new plan's grant deducts (`planChangeGrant`) and its period's chain starts at. */
  spent: number;
  left: LeftPaidPeriod | null;
}

/**
 * The terms of a plan change (ADR 0109, amended), as a subscription biller keeps a subscription:
 * - paid → paid (contract changes of Enterprise included): the renewal anchor is kept, so the
 *   period ends when it would have; the grant deducts what the chain spent;
 * - paid → Free or no plan: the paid period is kept (`left`) until its end;
 * - Free or no plan → paid before that end: the paid period resumes, its anchor and its spend
 *   (the larger of what it had spent when left and what the chain has spent since, which holds
 *   it when no Free 07:30 came between), not a fresh full month that nothing paid for;
 * - Free or no plan → paid otherwise: a new subscription anchored now, as before;
 * - Free ↔ no plan: nothing of the paid period changes.
 * `periodEnd` is that of the period in force at the change (already rolled if it had ended).
 */
export function planChangeTerms(change: {
  now: Date;
  fromPaid: boolean;
  toPaid: boolean;
  anchor: Date;
  periodEnd: Date | null;
  chainSpent: number;
  left: LeftPaidPeriod | null;
}): PlanChangeTerms {
  const { now, fromPaid, toPaid, anchor, periodEnd, chainSpent, left } = change;
  if (fromPaid && toPaid) return { anchor, spent: chainSpent, left: null };
  if (fromPaid) {
    const kept =
      periodEnd !== null && periodEnd > now ? { anchor, end: periodEnd, spent: chainSpent } : null;
    return { anchor, spent: chainSpent, left: kept };
  }
  const live = left !== null && left.end > now ? left : null;
  if (!toPaid) return { anchor, spent: chainSpent, left: live };
  if (live === null) return { anchor: now, spent: chainSpent, left: null };
  return { anchor: live.anchor, spent: Math.max(live.spent, chainSpent), left: null };
}

export function assertBalanced(postings: readonly Posting[]): void {
  const sum = postings.reduce((total, p) => total + p.amount, 0);
  if (sum !== 0) throw new Error(`unbalanced journal: postings sum to ${sum}`);
}

import {
  perSecond,
  TokenBuckets,
  tokensNeeded as bucketTokensNeeded,
  tokensOwed as bucketTokensOwed,
  type BucketLimit,
  type LeaseResult,
  type TakeResult,
} from '@meridian/rate-limits';

export type { TakeResult } from '@meridian/rate-limits';

/**
 * What enforces the plan RPS for the relay: answered at once from local state, or (several
 * processes per replica, ADR 0204; several replicas, ADR 0102) after asking for more tokens.
 */
export interface RateLimit {
  take(accountId: string, cost: number, ratePerSecond: number): TakeResult | Promise<TakeResult>;
}

/** The plan RPS as a bucket (COMPAT: one second of the rate), one object per distinct rate. */
export function planLimit(ratePerSecond: number): BucketLimit {
  let limit = LIMITS.get(ratePerSecond);
  if (limit === undefined) {
    limit = perSecond(ratePerSecond);
    if (LIMITS.size < 1_000) LIMITS.set(ratePerSecond, limit);
  }
  return limit;
}
const LIMITS = new Map<number, BucketLimit>();

/** The tokens a call of `cost` needs under the plan RPS. */
export function tokensNeeded(cost: number, ratePerSecond: number): number {
  return bucketTokensNeeded(cost, planLimit(ratePerSecond));
}

/** What a call of `cost` owes beyond what it needs: the excess of a batch larger than the bucket. */
export function tokensOwed(cost: number, ratePerSecond: number): number {
  return bucketTokensOwed(cost, planLimit(ratePerSecond));
}

/** Buckets of every account seen by this process (the @meridian/rate-limits bucket). */
export class RateLimiter implements RateLimit {
  private readonly buckets: TokenBuckets;

  constructor(now: () => number) {
    this.buckets = new TokenBuckets(now);
  }

  take(accountId: string, cost: number, ratePerSecond: number): TakeResult {
    return this.buckets.take(accountId, cost, planLimit(ratePerSecond));
  }

  /** A lease for one process of the replica (see `takeUpTo` in @meridian/rate-limits). */
  lease(
    accountId: string,
    needed: number,
    wanted: number,
    returned: number,
    ratePerSecond: number,
  ): LeaseResult {
    return this.buckets.lease(accountId, needed, wanted, returned, planLimit(ratePerSecond));
  }

  sweep(): void {
    this.buckets.sweep();
  }
}

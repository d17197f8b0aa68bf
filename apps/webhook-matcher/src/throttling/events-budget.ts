import { TokenBuckets, type BucketLimit } from '@meridian/rate-limits';
import type { Clock } from '@meridian/time';

/**
 * The account's events per second (spec "Plan limits for webhooks"): one token bucket per
 * account for all its webhooks, rate and burst (12×) from the account's plan caps. Above it the
 * event is dropped, not delayed. One event costs one token per webhook it matched: two webhooks
 * of one account watching the same address spend two.
 */
export class EventsBudget {
  private readonly buckets: TokenBuckets;

  constructor(clock: Clock) {
    this.buckets = new TokenBuckets(() => clock.now().getTime());
  }

  /** True when the event may go out; false when it is over the budget and must be dropped. */
  admit(accountId: string, limit: BucketLimit): boolean {
    if (limit.ratePerSecond <= 0 && limit.burst <= 0) return false;
    return this.buckets.take(accountId, 1, limit).ok;
  }

  /** Forgets idle accounts (their bucket would be full again anyway). */
  sweep(): void {
    this.buckets.sweep();
  }
}

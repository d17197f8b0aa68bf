/**
 * Per-account token bucket for the plan's node RPS (COMPAT table): capacity = one second of
 * the rate, refilled continuously. A batch of n calls takes n tokens. Pure: time comes in.
 */
export interface Bucket {
  tokens: number;
  updatedMs: number;
}

export type TakeResult = { ok: true } | { ok: false; retryAfterMs: number };

export function take(
  bucket: Bucket,
  cost: number,
  ratePerSecond: number,
  nowMs: number,
): TakeResult {
  const capacity = Math.max(ratePerSecond, 1);
  const elapsed = Math.max(0, nowMs - bucket.updatedMs);
  bucket.tokens = Math.min(capacity, bucket.tokens + (elapsed * ratePerSecond) / 1000);
  bucket.updatedMs = nowMs;
  // A batch larger than one second of the rate needs a full bucket, not an impossible one.
  const needed = Math.min(cost, capacity);
  if (bucket.tokens >= needed) {
    bucket.tokens -= needed;
    return { ok: true };
  }
  return {
    ok: false,
    retryAfterMs: Math.ceil(((needed - bucket.tokens) * 1000) / Math.max(ratePerSecond, 1e-9)),
  };
}

/** Buckets of every account seen by this replica; idle ones are dropped by `sweep`. */
export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly now: () => number) {}

  take(accountId: string, cost: number, ratePerSecond: number): TakeResult {
    let bucket = this.buckets.get(accountId);
    const nowMs = this.now();
    if (bucket === undefined) {
      bucket = { tokens: Math.max(ratePerSecond, 1), updatedMs: nowMs };
      this.buckets.set(accountId, bucket);
    }
    return take(bucket, cost, ratePerSecond, nowMs);
  }

  /** Forget buckets that are full again (idle for over a second). */
  sweep(): void {
    const nowMs = this.now();
    for (const [account, bucket] of this.buckets)
      if (nowMs - bucket.updatedMs > 1_000) this.buckets.delete(account);
  }
}

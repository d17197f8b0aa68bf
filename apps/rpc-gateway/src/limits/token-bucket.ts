/**
 * Per-account token bucket for the plan's node RPS (COMPAT table): capacity = one second of
 * the rate, refilled continuously. A batch of n calls takes n tokens. Pure: time comes in.
 */
export interface Bucket {
  tokens: number;
  updatedMs: number;
}

export type TakeResult = { ok: true } | { ok: false; retryAfterMs: number };

/**
 * What enforces the plan RPS for the relay: answered at once from local state, or (several
 * processes per replica, ADR 0204) after asking the replica's primary for more tokens.
 */
export interface RateLimit {
  take(accountId: string, cost: number, ratePerSecond: number): TakeResult | Promise<TakeResult>;
}

/** The tokens a call of `cost` needs: a batch larger than one second of the rate needs a full bucket. */
export function tokensNeeded(cost: number, ratePerSecond: number): number {
  return Math.min(cost, Math.max(ratePerSecond, 1));
}

function refill(bucket: Bucket, ratePerSecond: number, nowMs: number): void {
  const capacity = Math.max(ratePerSecond, 1);
  const elapsed = Math.max(0, nowMs - bucket.updatedMs);
  bucket.tokens = Math.min(capacity, bucket.tokens + (elapsed * ratePerSecond) / 1000);
  bucket.updatedMs = nowMs;
}

function retryAfter(
  bucket: Bucket,
  needed: number,
  ratePerSecond: number,
): { ok: false; retryAfterMs: number } {
  return {
    ok: false,
    retryAfterMs: Math.ceil(((needed - bucket.tokens) * 1000) / Math.max(ratePerSecond, 1e-9)),
  };
}

export function take(
  bucket: Bucket,
  cost: number,
  ratePerSecond: number,
  nowMs: number,
): TakeResult {
  refill(bucket, ratePerSecond, nowMs);
  const needed = tokensNeeded(cost, ratePerSecond);
  if (bucket.tokens >= needed) {
    bucket.tokens -= needed;
    return { ok: true };
  }
  return retryAfter(bucket, needed, ratePerSecond);
}

/**
 * Takes at least `needed` and up to `wanted` whole tokens (a lease, ADR 0204), after adding back
 * `returned` tokens an earlier lease did not use. Pure: time comes in.
 */
export function takeUpTo(
  bucket: Bucket,
  needed: number,
  wanted: number,
  returned: number,
  ratePerSecond: number,
  nowMs: number,
): { ok: true; granted: number } | { ok: false; retryAfterMs: number } {
  refill(bucket, ratePerSecond, nowMs);
  bucket.tokens = Math.min(Math.max(ratePerSecond, 1), bucket.tokens + returned);
  if (bucket.tokens < needed) return retryAfter(bucket, needed, ratePerSecond);
  const granted = Math.max(needed, Math.min(wanted, Math.floor(bucket.tokens)));
  bucket.tokens -= granted;
  return { ok: true, granted };
}

/** Buckets of every account seen by this replica; idle ones are dropped by `sweep`. */
export class RateLimiter implements RateLimit {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly now: () => number) {}

  take(accountId: string, cost: number, ratePerSecond: number): TakeResult {
    return take(this.bucket(accountId, ratePerSecond), cost, ratePerSecond, this.now());
  }

  /** A lease for one process of the replica (see `takeUpTo`). */
  lease(
    accountId: string,
    needed: number,
    wanted: number,
    returned: number,
    ratePerSecond: number,
  ): { ok: true; granted: number } | { ok: false; retryAfterMs: number } {
    const bucket = this.bucket(accountId, ratePerSecond);
    return takeUpTo(bucket, needed, wanted, returned, ratePerSecond, this.now());
  }

  private bucket(accountId: string, ratePerSecond: number): Bucket {
    let bucket = this.buckets.get(accountId);
    if (bucket === undefined) {
      bucket = { tokens: Math.max(ratePerSecond, 1), updatedMs: this.now() };
      this.buckets.set(accountId, bucket);
    }
    return bucket;
  }

  /** Forget buckets that are full again (idle for over a second). */
  sweep(): void {
    const nowMs = this.now();
    for (const [account, bucket] of this.buckets)
      if (nowMs - bucket.updatedMs > 1_000) this.buckets.delete(account);
  }
}

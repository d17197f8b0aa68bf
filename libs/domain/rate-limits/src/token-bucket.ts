/**
 * The one token bucket of the project: gateway node RPS, audit RPS, webhook events per second,
 * and the fleet-wide budget the gateway replicas lease from (ADR 0102). A bucket holds at most
 * `burst` tokens and refills continuously at `ratePerSecond`; a call of cost n takes n tokens.
 * Pure: time comes in as epoch milliseconds, so a FakeClock drives it in tests.
 */
export interface BucketLimit {
  /** Tokens added per second. */
  readonly ratePerSecond: number;
  /** The most tokens the bucket holds (what an idle account may spend at once). */
  readonly burst: number;
}

export interface Bucket {
  tokens: number;
  updatedMs: number;
}

export type TakeResult = { ok: true } | { ok: false; retryAfterMs: number };
export type LeaseResult = { ok: true; granted: number } | { ok: false; retryAfterMs: number };

/** Capacity of a bucket: never below one token, so a limit of 0.5/s still admits a call. */
export function capacityOf(limit: BucketLimit): number {
  return Math.max(limit.burst, 1);
}

/** The gateway's plan RPS (COMPAT): the bucket holds one second of the rate. */
export function perSecond(ratePerSecond: number): BucketLimit {
  return { ratePerSecond, burst: Math.max(ratePerSecond, 1) };
}

/**
 * The tokens a call of `cost` needs in the bucket to be admitted: a batch larger than the bucket
 * needs a full bucket, not an impossible one. It is then charged its whole cost (`take`): the
 * excess is debt the rate repays before the next call, so the average never exceeds the rate.
 */
export function tokensNeeded(cost: number, limit: BucketLimit): number {
  return Math.min(cost, capacityOf(limit));
}

/** What a call of `cost` owes beyond the tokens it needed (`tokensNeeded`): a batch larger than the bucket. */
export function tokensOwed(cost: number, limit: BucketLimit): number {
  return Math.max(0, cost - capacityOf(limit));
}

/** A new bucket starts full: an account's first second is not throttled. */
export function fullBucket(limit: BucketLimit, nowMs: number): Bucket {
  return { tokens: capacityOf(limit), updatedMs: nowMs };
}

export function refill(bucket: Bucket, limit: BucketLimit, nowMs: number): void {
  const elapsed = Math.max(0, nowMs - bucket.updatedMs);
  bucket.tokens = Math.min(
    capacityOf(limit),
    bucket.tokens + (elapsed * limit.ratePerSecond) / 1000,
  );
  // A clock that stepped back does not move the bucket back (nor refill it twice later).
  if (nowMs > bucket.updatedMs) bucket.updatedMs = nowMs;
}

/** How long until the bucket holds `needed` tokens (at least 1 ms). */
export function waitFor(bucket: Bucket, needed: number, limit: BucketLimit): number {
  if (limit.ratePerSecond <= 0) return Number.POSITIVE_INFINITY;
  return Math.max(1, Math.ceil(((needed - bucket.tokens) * 1000) / limit.ratePerSecond));
}

export function take(bucket: Bucket, cost: number, limit: BucketLimit, nowMs: number): TakeResult {
  refill(bucket, limit, nowMs);
  const needed = tokensNeeded(cost, limit);
  if (bucket.tokens >= needed) {
    // The whole cost: a batch larger than the bucket leaves it below empty (see tokensNeeded).
    bucket.tokens -= cost;
    return { ok: true };
  }
  return { ok: false, retryAfterMs: waitFor(bucket, needed, limit) };
}

/**
 * A lease (ADR 0204, 0102): after adding back `returned` tokens an earlier lease did not use,
 * takes at least `needed` and up to `wanted` whole tokens. A negative `returned` charges tokens
 * a holder spent without this bucket's grant (a fleet lease that timed out and was answered
 * late, ADR 0102): they are owed, and may take the bucket below empty until it refills.
 */
export function takeUpTo(
  bucket: Bucket,
  needed: number,
  wanted: number,
  returned: number,
  limit: BucketLimit,
  nowMs: number,
): LeaseResult {
  refill(bucket, limit, nowMs);
  bucket.tokens = Math.min(capacityOf(limit), bucket.tokens + returned);
  if (bucket.tokens < needed) return { ok: false, retryAfterMs: waitFor(bucket, needed, limit) };
  const granted = Math.max(needed, Math.min(wanted, Math.floor(bucket.tokens)));
  bucket.tokens -= granted;
  return { ok: true, granted };
}

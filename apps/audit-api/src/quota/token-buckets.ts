/**
 * Token buckets keyed by account, refilled from the caller's clock readings (no timers), so a
 * FakeClock drives them in tests. take() answers 0 when a token was taken, else the wait in ms.
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  take(key: string, ratePerSecond: number, burst: number, nowMs: number): number {
    const bucket = this.buckets.get(key) ?? { tokens: burst, at: nowMs };
    const refilled = Math.min(
      burst,
      bucket.tokens + (Math.max(0, nowMs - bucket.at) * ratePerSecond) / 1000,
    );
    if (refilled >= 1) {
      this.buckets.set(key, { tokens: refilled - 1, at: nowMs });
      return 0;
    }
    this.buckets.set(key, { tokens: refilled, at: nowMs });
    return Math.ceil(((1 - refilled) * 1000) / ratePerSecond);
  }
}

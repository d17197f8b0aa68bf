/**
 * Sign-in throttling, as a pure rule: a key (an email, a client address) may fail `limit` times in
 * a sliding window; the next attempt waits until the oldest failure leaves the window.
 */
export interface ThrottleRule {
  limit: number;
  windowMs: number;
}

export function retryAfterMs(failures: readonly Date[], now: Date, rule: ThrottleRule): number {
  const since = now.getTime() - rule.windowMs;
  const recent = failures
    .map((at) => at.getTime())
    .filter((at) => at > since)
    .sort((a, b) => a - b);
  if (recent.length < rule.limit) return 0;
  // The (n - limit + 1)-th most recent failure must leave the window before one more is allowed.
  const blocking = recent[recent.length - rule.limit]!;
  return Math.max(1, blocking + rule.windowMs - now.getTime());
}

/**
 * A sliding-window limit, the project's one for counted events kept as rows (failed sign-ins,
 * sign-ups per address, test deliveries per webhook and account): a key may have `limit` events
 * in the last `windowMs`; the next waits until the oldest that blocks it leaves the window. The
 * token bucket (`TokenBucket`) is the rule for rates kept in memory; this one is for counts a
 * fleet keeps in one database, where each event is a row with its time.
 */
export interface WindowRule {
  limit: number;
  windowMs: number;
}

/** Ms until one more event is allowed under `rule` given the key's event times (0: now). */
export function windowRetryAfterMs(events: readonly Date[], now: Date, rule: WindowRule): number {
  const since = now.getTime() - rule.windowMs;
  const recent = events
    .map((at) => at.getTime())
    .filter((at) => at > since)
    .sort((a, b) => a - b);
  if (recent.length < rule.limit) return 0;
  // The (n - limit + 1)-th most recent event must leave the window before one more is allowed.
  const blocking = recent[recent.length - rule.limit]!;
  return Math.max(1, blocking + rule.windowMs - now.getTime());
}

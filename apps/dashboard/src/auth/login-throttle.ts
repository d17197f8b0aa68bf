import { sha256 } from './secrets';

/**
 * Sign-in throttling, as a pure rule: a key (an email, a client address) may fail `limit` times in
 * a sliding window; the next attempt waits until the oldest failure leaves the window.
 */
export interface ThrottleRule {
  limit: number;
  windowMs: number;
}

/**
 * The sign-up throttle's keys: `count`, whose rows in the window are the client address's
 * sign-ups, and `attempt`, one sign-up (an email from that address). A sign-up sent again in the
 * window (a double submit answered 409 `sign_up_in_progress` or `email_taken`, a retry that
 * replays the email's stored billing request, ADR 0601 amendment) is the same attempt: it counts
 * once, and is not refused for the address's budget that its first sending already used.
 */
export function signUpThrottleKeys(
  clientAddress: string,
  email: string,
): { count: string; attempt: string } {
  const count = `signup-ip:${clientAddress}`;
  return { count, attempt: `${count}:email:${sha256(email)}` };
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

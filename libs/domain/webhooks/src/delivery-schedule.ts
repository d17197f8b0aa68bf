/**
 * The delivery schedule of the spec ("Webhook deliveries" rule 2) and COMPAT: one event is
 * attempted at most 8 times, with these waits after attempts 1–7; after the 8th failure the
 * event is given up (`failed_terminal`). delivery-worker decides from it when an attempt is
 * due, and the JetStream consumer declaration reads its backoff from it, so the two cannot
 * disagree.
 */
const SECOND = 1_000;
const MINUTE = 60 * SECOND;

export const MAX_DELIVERY_ATTEMPTS = 8;

/** Wait after attempt n (index n-1), n = 1..7. */
export const DELIVERY_RETRY_WAITS_MS: readonly number[] = Object.freeze([
  5 * SECOND,
  15 * SECOND,
  30 * SECOND,
  1 * MINUTE,
  5 * MINUTE,
  15 * MINUTE,
  30 * MINUTE,
]);

/** Cost of one attempt made (spec "Billing"): retries included, test deliveries free. */
export const DELIVERY_ATTEMPT_CU = 25;

/**
 * How long a due attempt may wait for endpoint concurrency, the host rate or a cleared balance
 * before it is spent (COMPAT "Protection", spec states rule 3).
 */
export const DELIVERY_WAIT_LIMIT_MS = 10 * MINUTE;

export type NextStep = { kind: 'retry'; attempt: number; dueAt: Date } | { kind: 'given_up' };

/** What follows a failed (or skipped) attempt number `attempt` made at `at`. */
export function afterFailedAttempt(attempt: number, at: Date): NextStep {
  if (!Number.isInteger(attempt) || attempt < 1) throw new RangeError(`bad attempt ${attempt}`);
  if (attempt >= MAX_DELIVERY_ATTEMPTS) return { kind: 'given_up' };
  return {
    kind: 'retry',
    attempt: attempt + 1,
    dueAt: new Date(at.getTime() + DELIVERY_RETRY_WAITS_MS[attempt - 1]!),
  };
}

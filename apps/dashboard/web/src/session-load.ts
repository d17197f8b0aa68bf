import { isBriefOutage } from './unavailable-words';

/**
 * The session's own load (`GET /api/auth/session`), before any page can show: QA saw it answered
 * 503 database_unavailable during a Postgres outage, after which the page said "Loading…" for
 * minutes and never asked again, even once Postgres was back. A brief outage (a 503 of
 * unavailable-words.ts) is said as such and asked again on its own after 1, 2, 4, 8, then every
 * 15 s until it loads; any other failure says what went wrong, with Try again.
 */
export const SESSION_RETRY_MAX_MS = 15_000;

/** The wait before the next ask after `failures` brief-outage answers in a row (1 the first). */
export function sessionRetryDelay(failures: number): number {
  return Math.min(1_000 * 2 ** Math.max(failures - 1, 0), SESSION_RETRY_MAX_MS);
}

/** What the session's failed load shows: loading, a brief outage (retried), or a failure. */
export type SessionLoadView =
  | { kind: 'loading' }
  | { kind: 'brief_outage'; message: string; retryInMs: number }
  | { kind: 'failed' };

export function sessionLoadView(
  failure: { status: number; code: string } | null,
  failures: number,
): SessionLoadView {
  if (failure === null) return { kind: 'loading' };
  if (!isBriefOutage(failure.status, failure.code)) return { kind: 'failed' };
  return {
    kind: 'brief_outage',
    message: 'The service is briefly unavailable; the page tries again on its own.',
    retryInMs: sessionRetryDelay(failures),
  };
}

import { DomainError } from '@meridian/errors';
import { DAY, HOUR } from '@meridian/time';

/** Longest range one usage read may span (as asked, before snapping). */
export const MAX_USAGE_RANGE_MS = 366 * DAY;

/** The default range: the 30 days up to the end of the current hour. */
const DEFAULT_RANGE_MS = 30 * DAY;

export interface UsageWindow {
  /** Start of the first hour counted (inclusive). */
  readonly from: Date;
  /** Start of the first hour not counted (exclusive). */
  readonly to: Date;
}

const hourFloor = (ms: number) => Math.floor(ms / HOUR) * HOUR;
const hourCeil = (ms: number) => Math.ceil(ms / HOUR) * HOUR;

/**
 * The hours a usage read counts. Usage is kept per hour (by usage window start), so a bound
 * inside an hour cannot be honoured exactly: `from` snaps down to its hour's start and `to` up
 * to the next hour's start (an hour that starts before `to` is counted whole), and the answer
 * echoes these snapped bounds, so a client sees the range it was really given and can page on
 * them without counting an hour twice (README, the usage route).
 */
export function usageWindowOf(query: { from?: string; to?: string }, now: Date): UsageWindow {
  // Without `to`: the end of the current hour, so the hour in progress is counted.
  const askedTo = query.to ? new Date(query.to).getTime() : hourCeil(now.getTime());
  const askedFrom = query.from ? new Date(query.from).getTime() : askedTo - DEFAULT_RANGE_MS;
  if (askedFrom >= askedTo || askedTo - askedFrom > MAX_USAGE_RANGE_MS) {
    // Located as a schema's refusal is (QA: this one alone named no place): in the query, the
    // pair of parameters rather than one of them.
    throw new DomainError(
      'invalid_query',
      'invalid',
      'query: from must be before to, at most 366 days apart',
      { details: { location: 'query', path: 'query' } },
    );
  }
  return { from: new Date(hourFloor(askedFrom)), to: new Date(hourCeil(askedTo)) };
}

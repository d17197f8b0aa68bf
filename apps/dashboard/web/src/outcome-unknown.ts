/**
 * A write whose outcome nobody knows (QA M5): the BFF gave up waiting for the API (503
 * `upstream_unavailable` with `outcome: "unknown"`, src/upstream/upstream.client.ts
 * `upstreamUnavailable`), or the page gave up waiting for the BFF (no answer to a POST, PUT,
 * PATCH or DELETE). The API may have applied it all the same: an operator's plan change said
 * "did not answer" and was made, while the page kept showing the old plan. So the message says
 * the change may still be applied, and the page asks for what it shows again, on the schedule
 * below, until it sees the outcome or the schedule ends. A read that timed out changed nothing.
 */

/** The words added to a write's timeout (the BFF's own message already carries them). */
export const MAY_STILL_BE_APPLIED =
  'the change may still be applied — this page will show the outcome';

/**
 * When the page asks again after such a failure (ms after it): soon (the API may have been slow
 * by a second), then less often while it may still be frozen, for two minutes in all. Each ask
 * replaces one still waiting (TanStack Query cancels a refetch in flight), so a frozen API costs
 * one request at a time.
 */
export const OUTCOME_CHECKS_MS: readonly number[] = [
  1_000, 3_000, 6_000, 10_000, 20_000, 30_000, 45_000, 60_000, 90_000, 120_000,
];

const isWrite = (method: string) => method !== 'GET' && method !== 'HEAD';

/** Whether a failed request is a write that may have been applied all the same. */
export function isOutcomeUnknown(
  method: string,
  status: number,
  code: string,
  body: Record<string, unknown>,
): boolean {
  if (!isWrite(method)) return false;
  if (status === 0) return code === 'timeout'; // no answer from the BFF at all
  return status === 503 && code === 'upstream_unavailable' && body['outcome'] === 'unknown';
}

export interface Timers {
  setTimeout(run: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/**
 * Asks again (`refetch`: every query the page shows) at `OUTCOME_CHECKS_MS` after each such
 * failure; a second failure starts the schedule over. Returns a stop for the schedule.
 */
export class OutcomeChecks {
  private handles: unknown[] = [];

  constructor(
    private readonly refetch: () => void,
    private readonly timers: Timers = {
      setTimeout: (run, ms) => globalThis.setTimeout(run, ms),
      clearTimeout: (handle) => globalThis.clearTimeout(handle as number),
    },
  ) {}

  start(): void {
    this.stop();
    this.handles = OUTCOME_CHECKS_MS.map((ms) => this.timers.setTimeout(() => this.refetch(), ms));
  }

  stop(): void {
    for (const handle of this.handles) this.timers.clearTimeout(handle);
    this.handles = [];
  }
}

/**
 * A change the page asked for, as it stands after such a failure: `applied` once what the page
 * reads again shows it (the plan it asked for), else still `unknown`.
 */
export function outcomeSeen<T>(asked: T, shown: T): 'applied' | 'unknown' {
  return asked === shown ? 'applied' : 'unknown';
}

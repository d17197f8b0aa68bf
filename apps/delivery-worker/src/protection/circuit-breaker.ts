/**
 * The circuit breaker of COMPAT "Protection", one per endpoint URL: more than 90 % failed over
 * the last 2 minutes with at least 20 attempts opens it for 5 minutes; then one probe is let
 * through (half-open): its success closes the breaker with a clean window, its failure opens
 * it for another 5 minutes. Attempts skipped while open are not attempts and stay out of the
 * window. An owner resume of a webhook of this endpoint after the breaker opened says the
 * endpoint is fixed: the breaker goes half-open at once, so the next attempt is the probe
 * (`resumed`). Time comes from the caller (an injected clock).
 */
export interface BreakerSettings {
  windowMs: number;
  minAttempts: number;
  /** Opens when failed / attempts is strictly above this. */
  failureRatio: number;
  openMs: number;
}

export const COMPAT_BREAKER: BreakerSettings = Object.freeze({
  windowMs: 2 * 60_000,
  minAttempts: 20,
  failureRatio: 0.9,
  openMs: 5 * 60_000,
});

export type BreakerAdmission = 'send' | 'probe' | 'skip';
export type BreakerState = 'closed' | 'open' | 'half_open';
/**
 * What an outcome changed, for the one log line an operator reads (QA: breakers opened and
 * closed on three URLs and skipped 1,564 attempts without a line): `opened` by a failing window
 * or a failed probe, `closed` by a probe that succeeded.
 */
export type BreakerChange = 'opened' | 'reopened' | 'closed';

export class CircuitBreaker {
  private readonly outcomes: { atMs: number; failed: boolean }[] = [];
  private head = 0;
  private failed = 0;
  private state: BreakerState = 'closed';
  private openUntilMs = 0;
  private openedAtMs = 0;
  /** The latest resume that made this breaker half-open (each resume gives one probe). */
  private resumeHonoredMs = 0;
  private probing = false;

  constructor(private readonly settings: BreakerSettings = COMPAT_BREAKER) {}

  stateAt(nowMs: number): BreakerState {
    if (this.state === 'open' && nowMs >= this.openUntilMs) return 'half_open';
    return this.state;
  }

  /** Whether an attempt due now is sent, sent as the one probe, or skipped. */
  admit(nowMs: number): BreakerAdmission {
    if (this.state === 'closed') return 'send';
    if (this.state === 'open' && nowMs < this.openUntilMs) return 'skip';
    this.state = 'half_open';
    if (this.probing) return 'skip';
    this.probing = true;
    return 'probe';
  }

  /**
   * The owner resumed a webhook of this endpoint at `resumedAtMs` (its status entry's
   * `resumedAt`, the matcher's clock). A resume later than the opening ends the open period
   * now: the next attempt is the probe, and a failed probe opens the breaker for 5 minutes as
   * usual. Each resume counts once (a clock skew between the apps cannot give a second probe).
   */
  resumed(resumedAtMs: number): void {
    if (this.state === 'closed') return;
    if (resumedAtMs <= this.openedAtMs || resumedAtMs <= this.resumeHonoredMs) return;
    this.resumeHonoredMs = resumedAtMs;
    this.openUntilMs = 0;
  }

  /** The outcome of an attempt admitted with `admission`, and what it changed. */
  record(
    nowMs: number,
    ok: boolean,
    admission: Exclude<BreakerAdmission, 'skip'>,
  ): BreakerChange | undefined {
    if (admission === 'probe') {
      this.probing = false;
      if (ok) this.close();
      else this.open(nowMs);
      return ok ? 'closed' : 'reopened';
    }
    // An attempt admitted before the breaker opened may finish after: it is history, no more.
    if (this.state !== 'closed') return undefined;
    this.outcomes.push({ atMs: nowMs, failed: !ok });
    if (!ok) this.failed += 1;
    this.prune(nowMs);
    const attempts = this.outcomes.length - this.head;
    if (
      attempts < this.settings.minAttempts ||
      this.failed / attempts <= this.settings.failureRatio
    )
      return undefined;
    this.open(nowMs);
    return 'opened';
  }

  /** An admitted probe that was never sent (e.g. the webhook was dropped meanwhile). */
  release(admission: BreakerAdmission): void {
    if (admission === 'probe') this.probing = false;
  }

  private open(nowMs: number): void {
    this.state = 'open';
    this.openedAtMs = nowMs;
    this.openUntilMs = nowMs + this.settings.openMs;
    this.reset();
  }

  private close(): void {
    this.state = 'closed';
    this.reset();
  }

  private reset(): void {
    this.outcomes.length = 0;
    this.head = 0;
    this.failed = 0;
  }

  private prune(nowMs: number): void {
    const oldest = nowMs - this.settings.windowMs;
    while (this.head < this.outcomes.length && this.outcomes[this.head]!.atMs <= oldest) {
      if (this.outcomes[this.head]!.failed) this.failed -= 1;
      this.head += 1;
    }
    if (this.head > 1024 && this.head * 2 > this.outcomes.length) {
      this.outcomes.splice(0, this.head);
      this.head = 0;
    }
  }
}

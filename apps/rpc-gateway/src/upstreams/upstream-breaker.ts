/**
 * The passive circuit breaker of one upstream node (ADR 0202 amendment, "Breaker"): every
 * attempt at the node says whether it failed (a timeout, a reset, a refused connection, an
 * answer that is not the calls' JSON-RPC answer, the node throttled) or got an answer. After
 * `failures` failed attempts in a row it opens: the node is picked by no call for a cooldown
 * (`cooldownMs`, doubling with each opening that follows without a close, up to
 * `maxCooldownMs`). Then one call is let through as a trial (half-open): an answer closes the
 * breaker, a failure opens it for the next, longer cooldown. A passing health check after the
 * cooldown closes it too while no call has been tried since it opened (`checkPassed`).
 * Outcomes of attempts sent before it opened are history, not evidence. Time comes from the
 * caller (an injected clock).
 *
 * Consecutive failures rather than delivery-worker's failure ratio over a window: a node is
 * asked hundreds of times a second, and a hung one costs every call that picks it the whole
 * upstream timeout, so the breaker must open after a few attempts, not after a window fills.
 */
export interface BreakerSettings {
  /** Failed attempts in a row that open the breaker. */
  failures: number;
  /** The first cooldown; each reopening without a close doubles it. */
  cooldownMs: number;
  maxCooldownMs: number;
}

export const DEFAULT_BREAKER: BreakerSettings = Object.freeze({
  failures: 3,
  cooldownMs: 5_000,
  maxCooldownMs: 60_000,
});

export type BreakerState = 'closed' | 'open' | 'half_open';
/** How an attempt was let through: as usual, or as the one trial of a half-open breaker. */
export type BreakerAdmission = 'send' | 'trial';
/** What an outcome changed, for the one log line and the gauge (none: nothing changed). */
export type BreakerChange = 'opened' | 'reopened' | 'closed';

export class UpstreamBreaker {
  private open = false;
  private failedInRow = 0;
  /** Openings since the last close: the cooldown's exponent. */
  private openings = 0;
  private openUntilMs = 0;
  private trialInFlight = false;
  /** A call was let through as a trial since the breaker last opened from closed. */
  private triedSinceOpened = false;

  constructor(private readonly settings: BreakerSettings = DEFAULT_BREAKER) {}

  stateAt(nowMs: number): BreakerState {
    if (!this.open) return 'closed';
    return nowMs < this.openUntilMs ? 'open' : 'half_open';
  }

  /** Whether an attempt may be sent now (without claiming the trial). */
  mayTry(nowMs: number): boolean {
    if (!this.open) return true;
    return nowMs >= this.openUntilMs && !this.trialInFlight;
  }

  /** Lets an attempt through now, claiming the trial when half-open; undefined: not now. */
  admit(nowMs: number): BreakerAdmission | undefined {
    if (!this.open) return 'send';
    if (nowMs < this.openUntilMs || this.trialInFlight) return undefined;
    this.trialInFlight = true;
    this.triedSinceOpened = true;
    return 'trial';
  }

  /** The outcome of an admitted attempt (`ok`: the node answered), and what it changed. */
  record(nowMs: number, ok: boolean, admission: BreakerAdmission): BreakerChange | undefined {
    if (admission === 'trial') {
      this.trialInFlight = false;
      if (!ok) {
        this.openFor(nowMs);
        return 'reopened';
      }
      return this.close();
    }
    if (this.open) return undefined;
    if (ok) {
      this.failedInRow = 0;
      return undefined;
    }
    this.failedInRow += 1;
    if (this.failedInRow < this.settings.failures) return undefined;
    this.openFor(nowMs);
    this.triedSinceOpened = false;
    return 'opened';
  }

  /**
   * A passing health check: closes the breaker when its cooldown is over and no call has been
   * tried on the node since it opened, so the checks are the only evidence there is (QA: on an
   * idle replica nothing else would ever close it, and the gauge stayed 1 for a healthy node).
   * Once a trial has been tried, only a trial closes it: a node answering eth_blockNumber but
   * failing calls keeps reopening.
   */
  checkPassed(nowMs: number): BreakerChange | undefined {
    if (!this.open || nowMs < this.openUntilMs || this.triedSinceOpened || this.trialInFlight)
      return undefined;
    return this.close();
  }

  /** The cooldown of the current opening (ms), for the log line. */
  get cooldownMs(): number {
    return this.currentCooldown();
  }

  private close(): BreakerChange {
    this.open = false;
    this.failedInRow = 0;
    this.openings = 0;
    return 'closed';
  }

  private openFor(nowMs: number): void {
    this.open = true;
    this.openings += 1;
    this.failedInRow = 0;
    this.openUntilMs = nowMs + this.currentCooldown();
  }

  private currentCooldown(): number {
    const { cooldownMs, maxCooldownMs } = this.settings;
    return Math.min(maxCooldownMs, cooldownMs * 2 ** Math.max(0, this.openings - 1));
  }
}

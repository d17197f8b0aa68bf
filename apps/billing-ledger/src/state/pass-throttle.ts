import { realTimers, type WaitTimer } from '@meridian/platform-db';

/**
 * Where a `PassThrottle` reads the time and arms the end of its interval. The app runs on the
 * process's (`processPassTimers`); a test passes timers that fire only when it moves them
 * (`FakeClockTimers` of platform-db), so a case can tell a pass that waited for the interval
 * from one that did not, whatever the machine's load.
 */
export interface PassTimers {
  /** Milliseconds on a monotonic scale. */
  now(): number;
  timer: WaitTimer;
}

/** The process's monotonic time and timers (platform-db's: a waiting pass keeps no process alive). */
export const processPassTimers: PassTimers = { now: () => performance.now(), timer: realTimers };

/**
 * At most one pass per `intervalMs`, the first one at once (a throttle, not a delay): a request
 * after a quiet interval runs the pass now; requests within the interval share one pass at its
 * end. The balance-state publisher runs its usage passes through it (ADR 0104): at a fleet's
 * shape a usage commit comes about once a second, and a plain delay after the first change held
 * every commit's states back for that long, while coalescing gained nothing.
 */
export class PassThrottle {
  private lastAt = -Infinity;
  /** Cancels the pass waiting for the end of the interval, when one is armed. */
  private waiting: (() => void) | undefined;

  constructor(
    private readonly intervalMs: number,
    private readonly pass: () => void,
    private readonly timers: PassTimers = processPassTimers,
  ) {}

  /** A pass is owed: now if the last one is `intervalMs` old, else at the end of its interval. */
  request(): void {
    if (this.waiting) return;
    const wait = this.lastAt + this.intervalMs - this.timers.now();
    if (wait <= 0) {
      this.run();
      return;
    }
    this.waiting = this.timers.timer(wait, () => {
      this.waiting = undefined;
      this.run();
    });
  }

  /** A pass now whatever the interval (an ok ↔ exhausted flip); a waiting one is folded in. */
  runNow(): void {
    this.cancel();
    this.run();
  }

  cancel(): void {
    this.waiting?.();
    this.waiting = undefined;
  }

  private run(): void {
    this.lastAt = this.timers.now();
    this.pass();
  }
}

/**
 * Injection token of the timers the balance-state publisher's usage passes run on
 * (`processPassTimers` in the app; `AppOptions.statePassTimers` in tests).
 */
export const STATE_PASS_TIMERS = Symbol('STATE_PASS_TIMERS');

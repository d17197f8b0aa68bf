/**
 * At most one pass per `intervalMs`, the first one at once (a throttle, not a delay): a request
 * after a quiet interval runs the pass now; requests within the interval share one pass at its
 * end. The balance-state publisher runs its usage passes through it (ADR 0104): at a fleet's
 * shape a usage commit comes about once a second, and a plain delay after the first change held
 * every commit's states back for that long, while coalescing gained nothing.
 */
export class PassThrottle {
  private lastAt = -Infinity;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly intervalMs: number,
    private readonly pass: () => void,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** A pass is owed: now if the last one is `intervalMs` old, else at the end of its interval. */
  request(): void {
    if (this.timer) return;
    const wait = this.lastAt + this.intervalMs - this.now();
    if (wait <= 0) {
      this.run();
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.run();
    }, wait);
    this.timer.unref();
  }

  /** A pass now whatever the interval (an ok ↔ exhausted flip); a waiting one is folded in. */
  runNow(): void {
    this.cancel();
    this.run();
  }

  cancel(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private run(): void {
    this.lastAt = this.now();
    this.pass();
  }
}

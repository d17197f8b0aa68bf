/**
 * Starts `onTimeout` after `ms` unless the returned cancel is called first. Production runs on
 * the process's timers (the wait is real time, like pg-pool's acquire wait); unit tests pass
 * timers driven by a FakeClock.
 */
export type WaitTimer = (ms: number, onTimeout: () => void) => () => void;

/**
 * The process's timers. A timer armed here does not keep the process alive on its own (unref):
 * what waits on it is a request, a pass or a stop that something else holds open.
 */
export const realTimers: WaitTimer = (ms, onTimeout) => {
  const timer = setTimeout(onTimeout, ms);
  timer.unref();
  return () => clearTimeout(timer);
};

/** A caller waited `waitedMs` for its key and gave up: the work never ran. */
export class KeyWaitTimeout extends Error {
  constructor(
    readonly key: string,
    readonly waitedMs: number,
  ) {
    super(`waited ${waitedMs} ms for ${key}`);
    this.name = 'KeyWaitTimeout';
  }
}

interface Lane {
  /** Grants the key to the next waiter (its timer cancelled), oldest first. */
  waiting: Array<() => void>;
}

/**
 * Runs the work of one key one at a time, in arrival order, in this process; different keys run
 * side by side. A caller waits at most `maxWaitMs` for its turn, then fails with
 * `KeyWaitTimeout` without running its work. A key with nothing running holds no memory.
 *
 * Why not a library (ADR 0405): the queue is 40 lines, and the wait bound has to run on
 * injected timers so its test moves a FakeClock instead of sleeping. Apps use it through
 * `AccountTurns` (account-turns.ts).
 */
export class KeyedQueue {
  /** Keys whose work is running; a lane's waiters are queued behind it. */
  private readonly lanes = new Map<string, Lane>();
  /** Callers waiting for their turn, every key together (the queue's metric). */
  private waitingNow = 0;

  constructor(private readonly timer: WaitTimer = realTimers) {}

  async run<T>(key: string, maxWaitMs: number, work: () => Promise<T>): Promise<T> {
    await this.acquire(key, maxWaitMs);
    try {
      return await work();
    } finally {
      this.release(key);
    }
  }

  /** Callers waiting for `key` (not the one running). */
  waiting(key: string): number {
    return this.lanes.get(key)?.waiting.length ?? 0;
  }

  /** Callers waiting for their turn over every key (not the ones running). */
  waitingTotal(): number {
    return this.waitingNow;
  }

  /** Whether work of `key` is running. */
  busy(key: string): boolean {
    return this.lanes.has(key);
  }

  private acquire(key: string, maxWaitMs: number): Promise<void> {
    const lane = this.lanes.get(key);
    if (lane === undefined) {
      this.lanes.set(key, { waiting: [] });
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const grant = () => {
        cancel();
        this.waitingNow -= 1;
        resolve();
      };
      const cancel = this.timer(maxWaitMs, () => {
        const at = lane.waiting.indexOf(grant);
        if (at >= 0) lane.waiting.splice(at, 1);
        this.waitingNow -= 1;
        reject(new KeyWaitTimeout(key, maxWaitMs));
      });
      lane.waiting.push(grant);
      this.waitingNow += 1;
    });
  }

  private release(key: string): void {
    const lane = this.lanes.get(key);
    const next = lane?.waiting.shift();
    if (next) next();
    else this.lanes.delete(key);
  }
}

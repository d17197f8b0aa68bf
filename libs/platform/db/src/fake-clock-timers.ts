import { FakeClock } from '@meridian/time';
import type { WaitTimer } from './keyed-queue';

/** Work that runs until `finish` is called; `started` says whether it began. */
export function gate() {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  const state = { started: false, finish };
  const work = async () => {
    state.started = true;
    await done;
  };
  return { state, work };
}

/** Lets every promise callback queued so far run. */
export const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Wait timers on a FakeClock, for the unit tests of `KeyedQueue` and `AccountTurns` users:
 * `advance` fires those due, in order, and lets their callbacks run; nothing sleeps.
 */
export class FakeClockTimers {
  readonly clock = new FakeClock();
  private pending: Array<{ at: number; fire: () => void }> = [];

  readonly timer: WaitTimer = (ms, onTimeout) => {
    const entry = { at: this.clock.now().getTime() + ms, fire: onTimeout };
    this.pending.push(entry);
    return () => {
      this.pending = this.pending.filter((p) => p !== entry);
    };
  };

  async advance(ms: number): Promise<void> {
    const now = this.clock.advance(ms).getTime();
    const due = this.pending.filter((p) => p.at <= now).sort((a, b) => a.at - b.at);
    this.pending = this.pending.filter((p) => p.at > now);
    for (const p of due) p.fire();
    await settle();
  }

  /** Timers armed and not yet fired or cancelled. */
  get armed(): number {
    return this.pending.length;
  }
}

import type { Clock } from '@meridian/time';

/**
 * The system clock plus an offset that only moves forward: what `TEST_CLOCK_CONTROL` puts
 * behind CLOCK so that a test running billing-ledger as a child process can let a rule's real
 * duration pass (top-up clearing, the 07:30 UTC Free reset) without sleeping for it.
 */
export class AdjustableClock implements Clock {
  private offsetMs = 0;

  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }

  advance(ms: number): Date {
    if (!Number.isInteger(ms) || ms < 0) throw new RangeError('the clock only moves forward');
    this.offsetMs += ms;
    return this.now();
  }
}

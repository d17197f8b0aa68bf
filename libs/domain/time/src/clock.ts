/**
 * Every rule with a duration reads time from a Clock (ARCHITECTURE "Time"). Production uses
 * `systemClock`; tests use `FakeClock` and move it forward instead of sleeping.
 */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export class FakeClock implements Clock {
  private ms: number;

  constructor(start: Date | string | number = '2026-01-01T00:00:00.000Z') {
    this.ms = new Date(start).getTime();
  }

  now(): Date {
    return new Date(this.ms);
  }

  set(at: Date | string | number): void {
    this.ms = new Date(at).getTime();
  }

  advance(ms: number): Date {
    this.ms += ms;
    return this.now();
  }
}

export const SECOND = 1_000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

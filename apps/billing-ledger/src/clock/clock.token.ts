/** Injection token of the Clock every duration rule reads (systemClock in production, FakeClock in tests). */
export const CLOCK = Symbol('CLOCK');

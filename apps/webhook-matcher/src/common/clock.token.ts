/** Injection token of the Clock every time rule reads (tests bind a FakeClock). */
export const CLOCK = Symbol('CLOCK');

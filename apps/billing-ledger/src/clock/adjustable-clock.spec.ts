import { AdjustableClock } from './adjustable-clock';

describe('AdjustableClock (TEST_CLOCK_CONTROL)', () => {
  it('follows the system clock plus what it was moved, and only moves forward', () => {
    const clock = new AdjustableClock();
    expect(Math.abs(clock.now().getTime() - Date.now())).toBeLessThan(1_000);
    const moved = clock.advance(86_400_000);
    expect(moved.getTime() - Date.now()).toBeGreaterThan(86_399_000);
    expect(clock.now().getTime()).toBeGreaterThanOrEqual(moved.getTime());
    expect(() => clock.advance(-1)).toThrow(RangeError);
    expect(() => clock.advance(1.5)).toThrow(RangeError);
  });
});

import { existsSync } from 'node:fs';
import { processClock } from '@meridian/platform-config';
import { MINUTE } from '@meridian/time';
import { movedClock, type MovedClock } from './moved-clock';

/** Waits (I/O, not a time rule) until the process clock has read the file again. */
async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(check()).toBe(true);
}

describe('movedClock: the offset file of ADR 0505 as tests move it', () => {
  let moved: MovedClock;
  afterEach(() => moved.dispose());

  it('a process clock given its env starts at 0 and follows every advance', async () => {
    moved = movedClock();
    const clock = processClock(moved.env);
    try {
      const skew = () => clock.now().getTime() - Date.now();
      expect(Math.abs(skew())).toBeLessThan(50);
      moved.advance(30 * MINUTE);
      moved.advance(15_000);
      expect(moved.offsetMs).toBe(30 * MINUTE + 15_000);
      await until(() => Math.abs(skew() - moved.offsetMs) < 50);
      expect(Math.abs(moved.now().getTime() - clock.now().getTime())).toBeLessThan(50);
    } finally {
      clock.close();
    }
  });

  it('refuses to go back or by part of a millisecond (the reader would ignore it)', () => {
    moved = movedClock();
    moved.advance(MINUTE);
    expect(() => moved.advance(-1)).toThrow(/forward by whole milliseconds, not by -1/);
    expect(() => moved.advance(0.5)).toThrow(/not by 0.5/);
    expect(moved.offsetMs).toBe(MINUTE);
  });

  it('dispose removes the file', () => {
    moved = movedClock('moved-clock-spec');
    expect(existsSync(moved.env.CLOCK_OFFSET_FILE)).toBe(true);
    moved.dispose();
    expect(existsSync(moved.env.CLOCK_OFFSET_FILE)).toBe(false);
  });
});

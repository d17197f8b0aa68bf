import { usageHourOf } from '@meridian/contracts';
import { nextUsageWindow } from './usage-outbox';

describe('nextUsageWindow', () => {
  const at = (iso: string) => Date.parse(iso);

  it('starts at its first attempt, or just after the last window when that attempt is older', () => {
    const last = at('2026-01-01T00:00:01.000Z');
    const now = at('2026-01-01T00:00:02.000Z');
    const window = (first: string) =>
      Object.values(nextUsageWindow(last, at(first), now)).map((d) => d.toISOString());
    expect(window('2026-01-01T00:00:01.300Z')).toEqual([
      '2026-01-01T00:00:01.300Z',
      '2026-01-01T00:00:02.000Z',
    ]);
    // Left behind by the last cut (its batch limit, or a row locked then).
    expect(window('2026-01-01T00:00:00.700Z')).toEqual([
      '2026-01-01T00:00:01.001Z',
      '2026-01-01T00:00:02.000Z',
    ]);
  });

  it('starts at the first attempt after an idle spell: the hour its attempts were made', () => {
    const { start, end } = nextUsageWindow(
      at('2026-01-01T00:10:00.000Z'),
      at('2026-01-01T02:59:59.800Z'),
      at('2026-01-01T03:00:00.500Z'),
    );
    expect([start.toISOString(), end.toISOString()]).toEqual([
      '2026-01-01T02:59:59.800Z',
      '2026-01-01T03:00:00.500Z',
    ]);
    expect(usageHourOf(start)).toBe('2026-01-01T02:00:00.000Z');
    // A worker's first cut.
    const first = nextUsageWindow(
      0,
      at('2026-01-01T03:00:01.000Z'),
      at('2026-01-01T03:00:02.000Z'),
    );
    expect(usageHourOf(first.start)).toBe('2026-01-01T03:00:00.000Z');
  });

  it('never overlaps the last window, even when the clock stands still or steps back', () => {
    let last = at('2026-01-01T00:00:05.000Z');
    for (const now of [
      '2026-01-01T00:00:05.000Z',
      '2026-01-01T00:00:01.000Z',
      '2026-01-01T00:00:05.000Z',
    ]) {
      // An attempt stamped later than the cut (a clock that stepped back) starts no later than it.
      const { start, end } = nextUsageWindow(last, at(now) + 500, at(now));
      expect(start.getTime()).toBeGreaterThan(last);
      expect(start.getTime()).toBeLessThanOrEqual(Math.max(at(now), last + 1));
      expect(end.getTime()).toBeGreaterThanOrEqual(start.getTime());
      last = end.getTime();
    }
  });
});

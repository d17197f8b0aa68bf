import { isDomainError } from '@meridian/errors';
import { FakeClock } from '@meridian/time';
import { addMonthsUtc, currentAllowanceWindow, dailyWindow } from './allowance-window';
import { PLAN_IDS } from './plan.types';

const iso = (window: { start: Date; end: Date }) => [
  window.start.toISOString(),
  window.end.toISOString(),
];

describe('Free daily window (07:30 UTC)', () => {
  it.each([
    ['2026-03-10T07:29:59.999Z', '2026-03-09T07:30:00.000Z', '2026-03-10T07:30:00.000Z'],
    ['2026-03-10T07:30:00.000Z', '2026-03-10T07:30:00.000Z', '2026-03-11T07:30:00.000Z'],
    ['2026-03-10T07:30:00.001Z', '2026-03-10T07:30:00.000Z', '2026-03-11T07:30:00.000Z'],
    ['2026-03-10T00:00:00.000Z', '2026-03-09T07:30:00.000Z', '2026-03-10T07:30:00.000Z'],
    ['2026-03-10T23:59:59.999Z', '2026-03-10T07:30:00.000Z', '2026-03-11T07:30:00.000Z'],
    ['2026-01-01T03:00:00.000Z', '2025-12-31T07:30:00.000Z', '2026-01-01T07:30:00.000Z'],
    ['2028-02-29T12:00:00.000Z', '2028-02-29T07:30:00.000Z', '2028-03-01T07:30:00.000Z'],
    ['1969-12-31T08:00:00.000Z', '1969-12-31T07:30:00.000Z', '1970-01-01T07:30:00.000Z'],
  ])('%s is in [%s, %s)', (now, start, end) => {
    expect(iso(currentAllowanceWindow('free', new Date(now)))).toEqual([start, end]);
    expect(iso(dailyWindow(new Date(now)))).toEqual([start, end]);
  });

  it('ignores the renewal anchor and accepts a Clock', () => {
    const clock = new FakeClock('2026-05-05T10:00:00.000Z');
    expect(iso(currentAllowanceWindow('free', clock, new Date('2026-01-20T00:00:00Z')))).toEqual([
      '2026-05-05T07:30:00.000Z',
      '2026-05-06T07:30:00.000Z',
    ]);
    clock.set('2026-05-06T07:29:59.999Z');
    expect(currentAllowanceWindow('free', clock).start.toISOString()).toBe(
      '2026-05-05T07:30:00.000Z',
    );
    clock.advance(1);
    expect(currentAllowanceWindow('free', clock).start.toISOString()).toBe(
      '2026-05-06T07:30:00.000Z',
    );
  });
});

describe('paid monthly window from the renewal anchor', () => {
  it.each([
    // anchor, now, start, end
    [
      '2026-01-15T10:00:00.000Z',
      '2026-01-15T10:00:00.000Z',
      '2026-01-15T10:00:00.000Z',
      '2026-02-15T10:00:00.000Z',
    ],
    [
      '2026-01-15T10:00:00.000Z',
      '2026-02-15T09:59:59.999Z',
      '2026-01-15T10:00:00.000Z',
      '2026-02-15T10:00:00.000Z',
    ],
    [
      '2026-01-15T10:00:00.000Z',
      '2026-02-15T10:00:00.000Z',
      '2026-02-15T10:00:00.000Z',
      '2026-03-15T10:00:00.000Z',
    ],
    [
      '2026-01-15T10:00:00.000Z',
      '2026-07-01T00:00:00.000Z',
      '2026-06-15T10:00:00.000Z',
      '2026-07-15T10:00:00.000Z',
    ],
    [
      '2026-01-15T10:00:00.000Z',
      '2027-01-20T00:00:00.000Z',
      '2027-01-15T10:00:00.000Z',
      '2027-02-15T10:00:00.000Z',
    ],
    // Month-end anchors clamp per month and come back to the 31st.
    [
      '2026-01-31T00:00:00.000Z',
      '2026-02-28T12:00:00.000Z',
      '2026-02-28T00:00:00.000Z',
      '2026-03-31T00:00:00.000Z',
    ],
    [
      '2026-01-31T00:00:00.000Z',
      '2026-02-27T12:00:00.000Z',
      '2026-01-31T00:00:00.000Z',
      '2026-02-28T00:00:00.000Z',
    ],
    [
      '2026-01-31T00:00:00.000Z',
      '2026-04-30T00:00:00.000Z',
      '2026-04-30T00:00:00.000Z',
      '2026-05-31T00:00:00.000Z',
    ],
    [
      '2027-12-31T00:00:00.000Z',
      '2028-02-29T00:00:00.000Z',
      '2028-02-29T00:00:00.000Z',
      '2028-03-31T00:00:00.000Z',
    ],
    // Before the anchor (clock skew, backdated anchors) the same arithmetic runs backwards.
    [
      '2026-03-10T00:00:00.000Z',
      '2026-02-20T00:00:00.000Z',
      '2026-02-10T00:00:00.000Z',
      '2026-03-10T00:00:00.000Z',
    ],
  ])('anchor %s, now %s → [%s, %s)', (anchor, now, start, end) => {
    for (const plan of PLAN_IDS.filter((p) => p !== 'free')) {
      expect(iso(currentAllowanceWindow(plan, new Date(now), new Date(anchor)))).toEqual([
        start,
        end,
      ]);
    }
  });

  it('needs an anchor', () => {
    let caught: unknown;
    try {
      currentAllowanceWindow('starter', new Date());
    } catch (error) {
      caught = error;
    }
    expect(isDomainError(caught) && caught.code).toBe('renewal_anchor_required');
  });

  it.each([
    ['2026-01-31T05:06:07.008Z', 1, '2026-02-28T05:06:07.008Z'],
    ['2026-01-31T05:06:07.008Z', 2, '2026-03-31T05:06:07.008Z'],
    ['2026-01-31T05:06:07.008Z', 13, '2027-02-28T05:06:07.008Z'],
    ['2026-03-31T00:00:00.000Z', -1, '2026-02-28T00:00:00.000Z'],
    ['2026-05-15T00:00:00.000Z', -17, '2024-12-15T00:00:00.000Z'],
  ])('addMonthsUtc(%s, %i) = %s', (anchor, months, expected) => {
    expect(addMonthsUtc(new Date(anchor), months).toISOString()).toBe(expected);
  });
});

import { isDomainError } from '@meridian/errors';
import { usageWindowOf } from './usage-window';

const NOW = new Date('2026-11-29T08:14:05.123Z');
const window = (from?: string, to?: string) => {
  const snapped = usageWindowOf({ ...(from ? { from } : {}), ...(to ? { to } : {}) }, NOW);
  return [snapped.from.toISOString(), snapped.to.toISOString()];
};
const codeOf = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    if (isDomainError(error)) return error.code;
  }
  return undefined;
};

describe('usageWindowOf: the whole hours a usage read counts', () => {
  it.each([
    // The QA report: a 10-minute window is the whole 08:00 hour, and says so.
    [
      '2026-11-29T08:10:00Z',
      '2026-11-29T08:20:00Z',
      '2026-11-29T08:00:00.000Z',
      '2026-11-29T09:00:00.000Z',
    ],
    // Hour bounds are kept as they are; `to` is exclusive: the 09:00 hour is not counted.
    [
      '2026-11-29T08:00:00Z',
      '2026-11-29T09:00:00Z',
      '2026-11-29T08:00:00.000Z',
      '2026-11-29T09:00:00.000Z',
    ],
    // One millisecond into an hour counts that hour whole, on either side.
    [
      '2026-11-29T07:59:59.999Z',
      '2026-11-29T09:00:00.001Z',
      '2026-11-29T07:00:00.000Z',
      '2026-11-29T10:00:00.000Z',
    ],
    // Offsets are read as the instant they name.
    [
      '2026-11-29T10:30:00+02:00',
      '2026-11-29T11:00:00+02:00',
      '2026-11-29T08:00:00.000Z',
      '2026-11-29T09:00:00.000Z',
    ],
  ])('from %s to %s counts [%s, %s)', (from, to, snappedFrom, snappedTo) => {
    expect(window(from, to)).toEqual([snappedFrom, snappedTo]);
  });

  it('pages of whole hours never count an hour twice', () => {
    const [, firstTo] = window('2026-11-29T06:00:00Z', '2026-11-29T08:00:00Z');
    const [secondFrom] = window(firstTo, '2026-11-29T10:00:00Z');
    expect(secondFrom).toBe(firstTo);
  });

  it('defaults: the 30 days up to the end of the current hour', () => {
    expect(window()).toEqual(['2026-10-30T09:00:00.000Z', '2026-11-29T09:00:00.000Z']);
    expect(window(undefined, '2026-11-29T00:00:00Z')).toEqual([
      '2026-10-30T00:00:00.000Z',
      '2026-11-29T00:00:00.000Z',
    ]);
  });

  it('refuses an empty or reversed range and one longer than 366 days', () => {
    expect(codeOf(() => window('2026-11-29T08:10:00Z', '2026-11-29T08:10:00Z'))).toBe(
      'invalid_query',
    );
    expect(codeOf(() => window('2026-11-29T09:00:00Z', '2026-11-29T08:00:00Z'))).toBe(
      'invalid_query',
    );
    expect(codeOf(() => window('2025-11-27T23:59:59Z', '2026-11-29T00:00:00Z'))).toBe(
      'invalid_query',
    );
    expect(codeOf(() => window('2025-11-28T00:00:00Z', '2026-11-29T00:00:00Z'))).toBeUndefined();
  });

  it('locates the refusal in the query, as a schema refusal is (QA)', () => {
    let refused: unknown;
    try {
      window('2026-11-29T09:00:00Z', '2026-11-29T08:00:00Z');
    } catch (error) {
      refused = error;
    }
    expect(isDomainError(refused) && [refused.message, refused.details]).toEqual([
      'query: from must be before to, at most 366 days apart',
      { location: 'query', path: 'query' },
    ]);
  });
});

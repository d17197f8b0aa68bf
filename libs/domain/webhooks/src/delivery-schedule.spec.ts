import {
  DELIVERY_RETRY_WAITS_MS,
  MAX_DELIVERY_ATTEMPTS,
  afterFailedAttempt,
} from './delivery-schedule';

describe('delivery schedule', () => {
  const at = new Date('2026-01-01T00:00:00.000Z');

  it('is the spec schedule: 8 attempts, waits 5 s, 15 s, 30 s, 1 min, 5 min, 15 min, 30 min', () => {
    expect(MAX_DELIVERY_ATTEMPTS).toBe(8);
    expect(DELIVERY_RETRY_WAITS_MS).toEqual([
      5_000, 15_000, 30_000, 60_000, 300_000, 900_000, 1_800_000,
    ]);
  });

  it.each([
    [1, 2, 5_000],
    [2, 3, 15_000],
    [3, 4, 30_000],
    [4, 5, 60_000],
    [5, 6, 300_000],
    [6, 7, 900_000],
    [7, 8, 1_800_000],
  ])('after attempt %i comes attempt %i, %i ms later', (attempt, next, wait) => {
    expect(afterFailedAttempt(attempt, at)).toEqual({
      kind: 'retry',
      attempt: next,
      dueAt: new Date(at.getTime() + wait),
    });
  });

  it('gives up after the 8th attempt', () => {
    expect(afterFailedAttempt(8, at)).toEqual({ kind: 'given_up' });
  });

  it('refuses attempt numbers below 1', () => {
    expect(() => afterFailedAttempt(0, at)).toThrow(RangeError);
  });

  it('spans 51 min 50 s from the first to the last attempt', () => {
    const total = DELIVERY_RETRY_WAITS_MS.reduce((a, b) => a + b, 0);
    expect(total).toBe((51 * 60 + 50) * 1_000);
  });
});

import { windowRetryAfterMs } from './sliding-window';

const rule = { limit: 3, windowMs: 60_000 };
const at = (ms: number) => new Date(1_700_000_000_000 + ms);

describe('windowRetryAfterMs', () => {
  it.each([
    ['no events', [], 0, 0],
    ['fewer than the limit', [0, 1_000], 2_000, 0],
    ['at the limit: wait until the oldest leaves the window', [0, 1_000, 2_000], 3_000, 57_000],
    ['old events outside the window do not count', [-120_000, 1_000, 2_000], 3_000, 0],
    [
      'more than the limit: the limit-th newest decides',
      [0, 10_000, 20_000, 30_000],
      31_000,
      39_000,
    ],
    ['exactly when the oldest leaves, allowed again', [0, 1_000, 2_000], 60_000, 0],
    ['unsorted input', [2_000, 0, 1_000], 3_000, 57_000],
  ])('%s', (_name, events, now, expected) => {
    expect(windowRetryAfterMs((events as number[]).map(at), at(now as number), rule)).toBe(
      expected,
    );
  });
});

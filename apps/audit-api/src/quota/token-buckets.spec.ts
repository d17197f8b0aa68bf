import { TokenBuckets } from './token-buckets';

describe('TokenBuckets', () => {
  it.each([
    // rate, burst, take times (ms), expected waits
    [1, 1, [0, 0, 500, 1000], [0, 1000, 500, 0]],
    [5, 5, [0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 200]],
    [2, 2, [0, 0, 0, 5000, 5000], [0, 0, 500, 0, 0]],
  ])('rate %d burst %d', (rate, burst, times, waits) => {
    const buckets = new TokenBuckets();
    expect(times.map((t) => buckets.take('acc', rate, burst, t))).toEqual(waits);
  });

  it('keeps accounts apart', () => {
    const buckets = new TokenBuckets();
    expect(buckets.take('a', 1, 1, 0)).toBe(0);
    expect(buckets.take('b', 1, 1, 0)).toBe(0);
  });
});

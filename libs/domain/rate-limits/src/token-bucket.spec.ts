import { FakeClock } from '@meridian/time';
import {
  fullBucket,
  perSecond,
  take,
  takeUpTo,
  tokensNeeded,
  tokensOwed,
  type BucketLimit,
  type TakeResult,
} from './token-bucket';
import { TokenBuckets } from './token-buckets';

describe('token bucket', () => {
  // limit, [at ms, cost] calls, expected answers (true or retryAfterMs)
  it.each<[string, BucketLimit, Array<[number, number]>, Array<true | number>]>([
    [
      'a full bucket serves one second of the rate at once',
      perSecond(3),
      [
        [0, 1],
        [0, 1],
        [0, 1],
        [0, 1],
      ],
      [true, true, true, 334],
    ],
    [
      'refills continuously',
      perSecond(2),
      [
        [0, 2],
        [0, 1],
        [250, 1],
        [500, 1],
      ],
      [true, 500, 250, true],
    ],
    [
      'burst above the rate (webhook events: 12x)',
      { ratePerSecond: 1, burst: 12 },
      [
        [0, 12],
        [0, 1],
        [1_000, 1],
      ],
      [true, 1_000, true],
    ],
    [
      'burst below the rate is honoured',
      { ratePerSecond: 10, burst: 2 },
      [
        [0, 1],
        [0, 1],
        [0, 1],
        [100, 1],
      ],
      [true, true, 100, true],
    ],
    [
      // Admitted on a full bucket, charged whole: 20 - 50 = -30, so the next one waits for
      // the rate to repay 30 and refill 20 (2.5 s at 20/s). The average stays 20 a second.
      'a batch larger than the bucket needs a full bucket and leaves the excess as debt',
      perSecond(20),
      [
        [0, 50],
        [0, 1],
        [1_000, 50],
        [2_500, 50],
        [2_500, 1],
      ],
      [true, 1_550, 1_500, true, 1_550],
    ],
    [
      'idle time never fills above the burst',
      { ratePerSecond: 5, burst: 5 },
      [
        [0, 5],
        [60_000, 5],
        [60_000, 1],
      ],
      [true, true, 200],
    ],
    [
      'a rate below one still admits a call per bucket',
      { ratePerSecond: 0.5, burst: 0.5 },
      [
        [0, 1],
        [0, 1],
        [2_000, 1],
      ],
      [true, 2_000, true],
    ],
    [
      'a clock stepping back neither refills nor breaks',
      perSecond(1),
      [
        [1_000, 1],
        [0, 1],
        [1_500, 1],
      ],
      [true, 1_000, 500],
    ],
  ])('%s', (_name, limit, calls, expected) => {
    const bucket = fullBucket(limit, calls[0]![0]);
    const answers = calls.map(([at, cost]) => {
      const answer: TakeResult = take(bucket, cost, limit, at);
      return answer.ok ? true : answer.retryAfterMs;
    });
    expect(answers).toEqual(expected);
  });

  it.each<[string, number, number, number, number, { ok: boolean; granted?: number }]>([
    // name, tokens in the bucket, needed, wanted, returned, answer (rate 10, burst 10)
    ['grants what is wanted when there is enough', 10, 1, 4, 0, { ok: true, granted: 4 }],
    ['grants what there is, at least the need', 3, 1, 8, 0, { ok: true, granted: 3 }],
    ['refuses below the need', 0.5, 1, 4, 0, { ok: false }],
    ['returned tokens are spent again', 0, 2, 2, 5, { ok: true, granted: 2 }],
    ['returned tokens never overfill', 9, 0, 0, 5, { ok: true, granted: 0 }],
  ])('lease: %s', (_name, tokens, needed, wanted, returned, answer) => {
    const limit = perSecond(10);
    const bucket = { tokens, updatedMs: 0 };
    const got = takeUpTo(bucket, needed, wanted, returned, limit, 0);
    expect(got.ok).toBe(answer.ok);
    if (got.ok) expect(got.granted).toBe(answer.granted);
    expect(bucket.tokens).toBeLessThanOrEqual(10);
    expect(bucket.tokens).toBeGreaterThanOrEqual(0);
  });

  it('owed tokens (a negative return) take the bucket below empty until the rate repays them', () => {
    const limit = perSecond(10);
    const bucket = { tokens: 2, updatedMs: 0 };
    // 5 tokens spent elsewhere without this bucket's grant: 2 - 5 = -3 (the bucket is 300 ms
    // from empty), so even 1 token is 400 ms away at 10 per second.
    expect(takeUpTo(bucket, 0, 0, -5, limit, 0)).toEqual({ ok: false, retryAfterMs: 300 });
    expect(bucket.tokens).toBe(-3);
    expect(takeUpTo(bucket, 1, 4, 0, limit, 0)).toEqual({ ok: false, retryAfterMs: 400 });
    expect(takeUpTo(bucket, 1, 4, 0, limit, 399)).toMatchObject({ ok: false });
    expect(takeUpTo(bucket, 1, 4, 0, limit, 400)).toEqual({ ok: true, granted: 1 });
  });

  it.each([
    [1, perSecond(20), 0],
    [20, perSecond(20), 0],
    [50, perSecond(20), 30],
    [50, { ratePerSecond: 1, burst: 12 }, 38],
  ])('a call of cost %d under %o owes %d tokens beyond its need', (cost, limit, owed) => {
    expect(tokensOwed(cost, limit)).toBe(owed);
  });

  it.each([
    [1, perSecond(20), 1],
    [50, perSecond(20), 20],
    [5, { ratePerSecond: 1, burst: 12 }, 5],
    [1, perSecond(0), 1],
  ])('a call of cost %d needs %o -> %d tokens', (cost, limit, needed) => {
    expect(tokensNeeded(cost, limit)).toBe(needed);
  });
});

describe('TokenBuckets', () => {
  it('keeps keys apart and reads the injected clock', () => {
    const clock = new FakeClock();
    const buckets = new TokenBuckets(() => clock.now().getTime());
    expect(buckets.take('a', 1, perSecond(1)).ok).toBe(true);
    expect(buckets.take('b', 1, perSecond(1)).ok).toBe(true);
    expect(buckets.take('a', 1, perSecond(1))).toEqual({ ok: false, retryAfterMs: 1_000 });
    clock.advance(1_000);
    expect(buckets.take('a', 1, perSecond(1)).ok).toBe(true);
  });

  it('forgets only buckets that are full again, which answer as a new one would', () => {
    const clock = new FakeClock();
    const buckets = new TokenBuckets(() => clock.now().getTime());
    buckets.take('slow', 12, { ratePerSecond: 1, burst: 12 });
    buckets.take('fast', 10, perSecond(10));
    clock.advance(1_000);
    buckets.sweep();
    expect(buckets.size).toBe(1);
    clock.advance(11_000);
    buckets.sweep();
    expect(buckets.size).toBe(0);
  });

  it('a plan change applies to the existing bucket', () => {
    const buckets = new TokenBuckets(() => 0);
    expect(buckets.take('a', 2, perSecond(2)).ok).toBe(true);
    expect(buckets.take('a', 1, perSecond(100)).ok).toBe(false);
  });

  it('leases come out of the same bucket as takes', () => {
    const buckets = new TokenBuckets(() => 0);
    expect(buckets.lease('a', 1, 8, 0, perSecond(10))).toEqual({ ok: true, granted: 8 });
    expect(buckets.take('a', 2, perSecond(10)).ok).toBe(true);
    expect(buckets.take('a', 1, perSecond(10)).ok).toBe(false);
  });
});

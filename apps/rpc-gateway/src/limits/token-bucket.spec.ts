import { FakeClock } from '@meridian/time';
import { RateLimiter, take } from './token-bucket';

describe('token bucket', () => {
  it.each([
    ['full bucket serves the rate at once', 10, 10, 1_000, true],
    ['one more waits', 10, 11, 1_000, false],
  ])('%s', (_name, rate, calls, _ms, lastOk) => {
    const bucket = { tokens: rate, updatedMs: 0 };
    let last = true;
    for (let i = 0; i < calls; i++) last = take(bucket, 1, rate, 0).ok;
    expect(last).toBe(lastOk);
  });

  it('refills with time and says when to retry', () => {
    const clock = new FakeClock();
    const limiter = new RateLimiter(() => clock.now().getTime());
    expect(limiter.take('a', 2, 2).ok).toBe(true);
    const refused = limiter.take('a', 1, 2);
    expect(refused).toEqual({ ok: false, retryAfterMs: 500 });
    clock.advance(500);
    expect(limiter.take('a', 1, 2).ok).toBe(true);
  });

  it('a batch larger than one second of the rate needs a full bucket, not an impossible one', () => {
    const clock = new FakeClock();
    const limiter = new RateLimiter(() => clock.now().getTime());
    expect(limiter.take('a', 50, 20).ok).toBe(true);
    expect(limiter.take('a', 50, 20).ok).toBe(false);
    clock.advance(1_000);
    expect(limiter.take('a', 50, 20).ok).toBe(true);
  });

  it('accounts are independent', () => {
    const limiter = new RateLimiter(() => 0);
    expect(limiter.take('a', 1, 1).ok).toBe(true);
    expect(limiter.take('b', 1, 1).ok).toBe(true);
    expect(limiter.take('a', 1, 1).ok).toBe(false);
  });
});

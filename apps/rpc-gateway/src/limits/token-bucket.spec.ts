import { FakeClock } from '@meridian/time';
import { RateLimiter, tokensNeeded } from './token-bucket';

describe('plan RPS limiter (the @meridian/rate-limits bucket holding one second of the rate)', () => {
  it.each([
    // rate, calls at once, admitted
    [10, 11, 10],
    [20, 25, 20],
    [1, 3, 1],
  ])('rate %d: %d calls at once admit %d', (rate, calls, admitted) => {
    const limiter = new RateLimiter(() => 0);
    let ok = 0;
    for (let i = 0; i < calls; i++) if (limiter.take('a', 1, rate).ok) ok++;
    expect(ok).toBe(admitted);
  });

  it('refills with time and says when to retry', () => {
    const clock = new FakeClock();
    const limiter = new RateLimiter(() => clock.now().getTime());
    expect(limiter.take('a', 2, 2).ok).toBe(true);
    expect(limiter.take('a', 1, 2)).toEqual({ ok: false, retryAfterMs: 500 });
    clock.advance(500);
    expect(limiter.take('a', 1, 2).ok).toBe(true);
  });

  it('a batch larger than one second of the rate needs a full bucket and is charged whole', () => {
    const clock = new FakeClock();
    const limiter = new RateLimiter(() => clock.now().getTime());
    expect(tokensNeeded(50, 20)).toBe(20);
    expect(limiter.take('a', 50, 20).ok).toBe(true);
    // 30 owed and 20 to refill: 2.5 s at 20 a second.
    expect(limiter.take('a', 50, 20)).toEqual({ ok: false, retryAfterMs: 2_500 });
    clock.advance(2_400);
    expect(limiter.take('a', 50, 20).ok).toBe(false);
    clock.advance(100);
    expect(limiter.take('a', 50, 20).ok).toBe(true);
  });

  it('accounts are independent', () => {
    const limiter = new RateLimiter(() => 0);
    expect(limiter.take('a', 1, 1).ok).toBe(true);
    expect(limiter.take('b', 1, 1).ok).toBe(true);
    expect(limiter.take('a', 1, 1).ok).toBe(false);
  });
});

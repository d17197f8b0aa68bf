import { FakeClock } from '@meridian/time';
import { EndpointLimits } from './endpoint-limits';

describe('EndpointLimits (10 in flight per URL, 200 req/s per host)', () => {
  it('admits 10 in flight per URL and the 11th after one is released', () => {
    const clock = new FakeClock();
    const limits = new EndpointLimits();
    const now = clock.now().getTime();
    const held = Array.from({ length: 10 }, () => limits.tryAcquire('https://a.io/x', 'a.io', now));
    expect(held.every((h) => h.ok)).toBe(true);
    expect(limits.tryAcquire('https://a.io/x', 'a.io', now).ok).toBe(false);
    // Another URL of another customer is not held up.
    expect(limits.tryAcquire('https://b.io/y', 'b.io', now).ok).toBe(true);
    const first = held[0]!;
    if (first.ok) {
      first.release();
      first.release(); // twice is once
    }
    expect(limits.inFlightOf('https://a.io/x')).toBe(9);
    expect(limits.tryAcquire('https://a.io/x', 'a.io', now).ok).toBe(true);
    expect(limits.tryAcquire('https://a.io/x', 'a.io', now).ok).toBe(false);
  });

  it('admits 200 requests per second per host across its URLs, then says when to come back', () => {
    const clock = new FakeClock();
    const limits = new EndpointLimits();
    let admitted = 0;
    for (let i = 0; i < 250; i += 1) {
      const a = limits.tryAcquire(`https://h.io/${i}`, 'h.io', clock.now().getTime());
      if (a.ok) {
        admitted += 1;
        a.release();
      } else expect(a.retryAfterMs).toBeGreaterThan(0);
    }
    expect(admitted).toBe(200);
    clock.advance(100);
    let more = 0;
    for (let i = 0; i < 50; i += 1) {
      const a = limits.tryAcquire(`https://h.io/${i}`, 'h.io', clock.now().getTime());
      if (a.ok) more += 1;
    }
    expect(more).toBe(20);
  });
});

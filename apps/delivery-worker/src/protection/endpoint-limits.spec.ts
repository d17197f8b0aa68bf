import { FakeClock } from '@meridian/time';
import { COMPAT_ENDPOINT_LIMITS, EndpointLimits } from './endpoint-limits';

describe('EndpointLimits (10 in flight per URL, 200 req/s per host)', () => {
  it('admits 10 in flight per URL and the 11th after one is released', () => {
    const clock = new FakeClock();
    const limits = new EndpointLimits();
    const now = clock.now().getTime();
    const held = Array.from({ length: 10 }, () =>
      limits.tryAcquire('https://a.io/x', 'a.io', 'acc_a', now),
    );
    expect(held.every((h) => h.ok)).toBe(true);
    expect(limits.tryAcquire('https://a.io/x', 'a.io', 'acc_a', now)).toMatchObject({
      ok: false,
      reason: 'endpoint_busy',
    });
    // Another URL of another customer is not held up.
    expect(limits.tryAcquire('https://b.io/y', 'b.io', 'acc_b', now).ok).toBe(true);
    const first = held[0]!;
    if (first.ok) {
      first.release();
      first.release(); // twice is once
    }
    expect(limits.inFlightOf('https://a.io/x')).toBe(9);
    expect(limits.inFlightOfAccount('acc_a')).toBe(9);
    expect(limits.tryAcquire('https://a.io/x', 'a.io', 'acc_a', now).ok).toBe(true);
    expect(limits.tryAcquire('https://a.io/x', 'a.io', 'acc_a', now).ok).toBe(false);
  });

  it('admits 200 requests per second per host across its URLs, then says when to come back', () => {
    const clock = new FakeClock();
    const limits = new EndpointLimits();
    let admitted = 0;
    for (let i = 0; i < 250; i += 1) {
      const a = limits.tryAcquire(`https://h.io/${i}`, 'h.io', 'acc_h', clock.now().getTime());
      if (a.ok) {
        admitted += 1;
        a.release();
      } else expect(a).toMatchObject({ reason: 'endpoint_busy', retryAfterMs: expect.any(Number) });
    }
    expect(admitted).toBe(200);
    clock.advance(100);
    let more = 0;
    for (let i = 0; i < 50; i += 1) {
      const a = limits.tryAcquire(`https://h.io/${i}`, 'h.io', 'acc_h', clock.now().getTime());
      if (a.ok) more += 1;
    }
    expect(more).toBe(20);
  });
});

describe('EndpointLimits: at most inFlightPerAccount in flight per account (default 64)', () => {
  const now = new FakeClock().now().getTime();

  it('defaults to 64, a quarter of the consumer 256 slots', () => {
    expect(COMPAT_ENDPOINT_LIMITS.inFlightPerAccount).toBe(64);
    const limits = new EndpointLimits();
    // 70 URLs of one account (each under its own cap of 10): 64 get in.
    const got = Array.from({ length: 70 }, (_, i) =>
      limits.tryAcquire(`https://a.io/${i}`, 'a.io', 'acc_a', now),
    );
    expect(got.filter((a) => a.ok)).toHaveLength(64);
    expect(got[64]).toMatchObject({ ok: false, reason: 'account_busy', retryAfterMs: 250 });
  });

  it('holds an account with many URLs at its cap; other accounts, also on that host, get in', () => {
    const limits = new EndpointLimits({ ...COMPAT_ENDPOINT_LIMITS, inFlightPerAccount: 3 });
    const held = [0, 1, 2].map((i) => limits.tryAcquire(`https://a.io/${i}`, 'a.io', 'acc_a', now));
    expect(held.every((a) => a.ok)).toBe(true);
    expect(limits.tryAcquire('https://a.io/3', 'a.io', 'acc_a', now)).toEqual({
      ok: false,
      retryAfterMs: 250,
      reason: 'account_busy',
    });
    expect(limits.inFlightOfAccount('acc_a')).toBe(3);
    // A refused job takes nothing: no count of its URL, no request of its host's rate.
    expect(limits.inFlightOf('https://a.io/3')).toBe(0);
    expect(limits.tryAcquire('https://b.io/hook', 'b.io', 'acc_b', now).ok).toBe(true);
    expect(limits.tryAcquire('https://a.io/other', 'a.io', 'acc_c', now).ok).toBe(true);
    expect(limits.inFlightOfAccount('acc_b')).toBe(1);
    expect(limits.inFlightOfAccount('acc_c')).toBe(1);
  });

  it('gives a released slot back to the account (once, however often release is called)', () => {
    const limits = new EndpointLimits({ ...COMPAT_ENDPOINT_LIMITS, inFlightPerAccount: 2 });
    const first = limits.tryAcquire('https://a.io/0', 'a.io', 'acc_a', now);
    const second = limits.tryAcquire('https://a.io/1', 'a.io', 'acc_a', now);
    expect(limits.tryAcquire('https://a.io/2', 'a.io', 'acc_a', now).ok).toBe(false);
    if (!first.ok || !second.ok) throw new Error('not admitted');
    first.release();
    first.release();
    expect(limits.inFlightOfAccount('acc_a')).toBe(1);
    const third = limits.tryAcquire('https://a.io/2', 'a.io', 'acc_a', now);
    expect(third.ok).toBe(true);
    expect(limits.tryAcquire('https://a.io/3', 'a.io', 'acc_a', now).ok).toBe(false);
    second.release();
    if (third.ok) third.release();
    expect(limits.inFlightOfAccount('acc_a')).toBe(0);
    expect(limits.inFlightOf('https://a.io/2')).toBe(0);
  });

  it('keeps the per-URL cap of 10 under a larger account cap', () => {
    const limits = new EndpointLimits({ ...COMPAT_ENDPOINT_LIMITS, inFlightPerAccount: 50 });
    const got = Array.from({ length: 12 }, () =>
      limits.tryAcquire('https://a.io/x', 'a.io', 'acc_a', now),
    );
    expect(got.filter((a) => a.ok)).toHaveLength(10);
    expect(got[10]).toMatchObject({ ok: false, reason: 'endpoint_busy' });
    expect(limits.inFlightOfAccount('acc_a')).toBe(10);
    expect(limits.tryAcquire('https://a.io/y', 'a.io', 'acc_a', now).ok).toBe(true);
  });
});

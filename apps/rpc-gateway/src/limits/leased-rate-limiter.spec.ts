import { FakeClock } from '@meridian/time';
import { LeasedRateLimiter, type LeaseRequest } from './leased-rate-limiter';
import { RateLimiter } from './token-bucket';

/** Two worker processes leasing from one primary's buckets, in memory. */
function replica(workers = 2, leaseMs = 100) {
  const clock = new FakeClock();
  const now = () => clock.now().getTime();
  const bank = new RateLimiter(now);
  const asked: LeaseRequest[] = [];
  const ask = (request: LeaseRequest) => {
    asked.push(request);
    return Promise.resolve(
      bank.lease(
        request.accountId,
        request.needed,
        request.wanted,
        request.returned,
        request.ratePerSecond,
      ),
    );
  };
  const limiters = Array.from(
    { length: workers },
    () => new LeasedRateLimiter(now, ask, { leaseMs }),
  );
  return { clock, limiters, asked };
}

async function admitted(limiter: LeasedRateLimiter, calls: number, rps: number): Promise<number> {
  let ok = 0;
  for (let i = 0; i < calls; i++) if ((await limiter.take('acct', 1, rps)).ok) ok++;
  return ok;
}

describe('leased rate limiter (one bucket per account, shared by the processes of a replica)', () => {
  it('never admits more than the bucket across processes, however the calls interleave', async () => {
    const { limiters } = replica(3);
    let ok = 0;
    for (let i = 0; i < 90; i++) if ((await limiters[i % 3]!.take('acct', 1, 25)).ok) ok++;
    expect(ok).toBeLessThanOrEqual(25);
    expect(ok).toBeGreaterThanOrEqual(20);
  });

  it('an account on one process gets the whole rate, mostly without asking the primary', async () => {
    const { limiters, asked } = replica(2);
    expect(await admitted(limiters[0]!, 1_000, 1_000)).toBe(1_000);
    expect(await admitted(limiters[0]!, 1, 1_000)).toBe(0);
    expect(asked.length).toBeLessThan(100);
  });

  it('concurrent calls on one process share one refill at a time instead of each taking a prefetch', async () => {
    const { limiters, asked } = replica(2);
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => limiters[0]!.take('acct', 1, 100)),
    );
    expect(answers.every((a) => a.ok)).toBe(true);
    expect(asked.length).toBeLessThan(25);
    // The other process still finds the rest of the bucket.
    expect(await admitted(limiters[1]!, 100, 100)).toBeGreaterThanOrEqual(40);
  });

  it('under steady traffic the lease is topped up ahead of need: calls do not wait for the primary', async () => {
    const { clock, limiters } = replica(2, 100);
    let waited = 0;
    for (let ms = 0; ms < 2_000; ms++) {
      const taken = limiters[0]!.take('acct', 1, 1_000);
      if (taken instanceof Promise) {
        waited++;
        expect((await taken).ok).toBe(true);
      } else expect(taken.ok).toBe(true);
      await Promise.resolve();
      clock.advance(1);
    }
    expect(waited).toBeLessThan(5);
  });

  it('refuses with the time until the bucket has the tokens again', async () => {
    const { limiters } = replica(2);
    expect(await admitted(limiters[0]!, 10, 10)).toBe(10);
    expect(await limiters[1]!.take('acct', 1, 10)).toEqual({ ok: false, retryAfterMs: 100 });
  });

  it('refills with time', async () => {
    const { clock, limiters } = replica(2);
    expect(await admitted(limiters[0]!, 10, 10)).toBe(10);
    clock.advance(500);
    expect(await admitted(limiters[1]!, 10, 10)).toBe(5);
  });

  it('gives back what an expired lease did not use, so the other process can spend it', async () => {
    const { clock, limiters } = replica(2, 100);
    // Worker 0 grows its prefetch while it spends, then stops with credit in hand.
    expect(await admitted(limiters[0]!, 7, 10)).toBe(7);
    const leftWithWorker1 = await admitted(limiters[1]!, 10, 10);
    expect(leftWithWorker1).toBeLessThan(3 + 1);
    clock.advance(100);
    limiters[0]!.sweep();
    await Promise.resolve();
    // 100 ms refilled 1 token; worker 0's unused credit is back in the bucket as well.
    expect(await admitted(limiters[1]!, 10, 10)).toBe(10 - 7 - leftWithWorker1 + 1);
  });

  it('a batch larger than one second of the rate needs a full bucket, not an impossible one', async () => {
    const { clock, limiters } = replica(2);
    expect((await limiters[0]!.take('acct', 50, 20)).ok).toBe(true);
    expect((await limiters[1]!.take('acct', 50, 20)).ok).toBe(false);
    clock.advance(2_500);
    expect((await limiters[1]!.take('acct', 50, 20)).ok).toBe(true);
  });

  it('charges a batch larger than the bucket whole: the replica holds the plan RPS on average', async () => {
    const { clock, limiters, asked } = replica(2);
    // 100-call batches on a 20 RPS plan from two processes, every 100 ms for 10 s.
    let calls = 0;
    for (let at = 0; at < 10_000; at += 100) {
      for (const limiter of limiters) if ((await limiter.take('acct', 100, 20)).ok) calls += 100;
      clock.advance(100);
    }
    // A full bucket (20) plus 10 s of the rate: 220 calls, i.e. two batches (not one per second).
    expect(calls).toBeLessThanOrEqual(20 + 20 * 10);
    expect(calls).toBeGreaterThanOrEqual(100);
    // The excess went to the primary's bucket as owed tokens, once per batch.
    expect(asked.filter((r) => r.returned === -80)).toHaveLength(calls / 100);
  });
});

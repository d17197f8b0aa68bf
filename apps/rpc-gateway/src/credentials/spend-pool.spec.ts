import { TokenBuckets } from '@meridian/rate-limits';
import { FakeClock } from '@meridian/time';
import { Registry } from 'prom-client';
import { StoreTimeoutError } from '../limits/fleet-bucket-store';
import type { LeaseAnswer } from '../limits/leased-rate-limiter';
import {
  SpendEstimate,
  UsageWindow,
  type SpendLeaseOptions,
  type SpendPool,
} from './spend-estimate';
import { meteredSpendPool, type SpendLeaseOutcome } from './spend-pool';

/**
 * The estimate across the fleet (ADR 0201 amendment): processes lease chunks of one pool per
 * balance state. The pool here is `takeUpTo` of @meridian/rate-limits on a bucket of rate 0,
 * the rule the Redis script runs (its equivalence: fleet-bucket-store.int-spec.ts).
 */
const LEASE: SpendLeaseOptions = { minChunkCu: 500, maxChunkShare: 1 / 32, leaseMs: 250 };

class MemoryPool implements SpendPool {
  readonly buckets: TokenBuckets;
  leases = 0;
  /** While set, every lease rejects as the store does while unreachable. */
  down: Error | undefined;

  constructor(private readonly clock: FakeClock) {
    this.buckets = new TokenBuckets(() => clock.now().getTime());
  }

  now = () => this.clock.now().getTime();

  take(accountId: string, version: number, seedCu: number, wantedCu: number, chargedCu: number) {
    this.leases++;
    if (this.down) return Promise.reject(this.down);
    return Promise.resolve(this.takeNow(accountId, version, seedCu, wantedCu, chargedCu));
  }

  takeNow(accountId: string, version: number, seedCu: number, wantedCu: number, chargedCu: number) {
    return this.buckets.lease(`${accountId}:${version}`, 0, wantedCu, -chargedCu, {
      ratePerSecond: 0,
      burst: seedCu,
    }) as LeaseAnswer;
  }

  /** What is left in a pool (below zero: overdrawn): all of it taken, then given back. */
  left(accountId: string, version: number, seedCu: number): number {
    const limit = { ratePerSecond: 0, burst: seedCu };
    const key = `${accountId}:${version}`;
    const all = this.buckets.lease(key, -1e15, 1e15, 0, limit);
    if (!all.ok) return Number.NaN;
    this.buckets.lease(key, 0, 0, all.granted, limit);
    return all.granted;
  }
}

/** The spend-pool metrics of a pool wrapped as the gateway wraps the fleet's. */
class Metered {
  readonly registry = new Registry();
  readonly pool: SpendPool;

  constructor(inner: SpendPool) {
    this.pool = meteredSpendPool(inner, this.registry);
  }

  async leases(): Promise<Record<SpendLeaseOutcome, number>> {
    const metric = await this.registry.getSingleMetric('spend_pool_leases_total')!.get();
    const counts = { granted: 0, empty: 0, failed_open: 0, late: 0 };
    for (const { labels, value } of metric.values)
      counts[labels['outcome'] as SpendLeaseOutcome] = value;
    return counts;
  }

  async leasedCu(): Promise<number> {
    const metric = await this.registry.getSingleMetric('spend_pool_leased_cu_total')!.get();
    return metric.values[0]?.value ?? 0;
  }
}

/** Covers and takes one call of `cu`, as the relay does; whether it was admitted. */
async function call(estimate: SpendEstimate, cu: number): Promise<boolean> {
  const covering = estimate.cover(cu);
  if (covering !== undefined) await covering;
  const admitted = estimate.take(cu);
  if (admitted) estimate.metered(cu);
  return admitted;
}

describe('SpendEstimate with a fleet pool', () => {
  it('two processes on one state of 20,000 CU spend the pool once, plus at most a call each (alone: twice)', async () => {
    const clock = new FakeClock();
    const pool = new MemoryPool(clock);
    const fleet = [0, 1].map(() => new SpendEstimate(new UsageWindow(), pool, 'acct', LEASE));
    const alone = [0, 1].map(() => new SpendEstimate(new UsageWindow()));
    for (const e of [...fleet, ...alone]) e.reset(7, 20_000);
    const spend = async (estimates: SpendEstimate[]) => {
      let admitted = 0;
      for (let i = 0; i < 1_000; i++) {
        // Both processes at once, 1 ms apart: the chunks adapt to a busy account.
        const answers = await Promise.all(estimates.map((e) => call(e, 100)));
        admitted += answers.filter(Boolean).length;
        clock.advance(1);
      }
      return admitted * 100;
    };
    const fleetCu = await spend(fleet);
    expect(await spend(alone)).toBe(40_000);
    // The documented bound: the state's spendable CU plus one call per process beyond its last
    // lease (each admits only what it leased; the last call may overdraw it).
    expect(fleetCu).toBeGreaterThanOrEqual(20_000);
    expect(fleetCu).toBeLessThanOrEqual(20_000 + 2 * 100);
    expect(fleet.every((e) => e.spent)).toBe(true);
  });

  it('answers calls from what it leased: a lease per chunk, none per call; a chunk is at most 1/32 of the state', async () => {
    const clock = new FakeClock();
    const pool = new MemoryPool(clock);
    const metered = new Metered(pool);
    const estimate = new SpendEstimate(new UsageWindow(), metered.pool, 'acct', LEASE);
    estimate.reset(1, 1_000_000);
    expect(estimate.cover(20)).toBeInstanceOf(Promise);
    let sync = 0;
    for (let i = 0; i < 5_000; i++) {
      const covering = estimate.cover(20);
      if (covering === undefined) sync++;
      else await covering;
      expect(estimate.take(20)).toBe(true);
      estimate.metered(20);
      await Promise.resolve();
      clock.advance(1);
    }
    // 100,000 CU spent in 5 s at 20 CU a call: a handful of leases, most calls without waiting.
    expect(sync).toBeGreaterThan(4_990);
    expect(pool.leases).toBeLessThan(300);
    // The pool was charged exactly what was leased; what is held is at most one chunk.
    const left = pool.left('acct', 1, 1_000_000);
    expect(1_000_000 - left).toBeGreaterThanOrEqual(100_000);
    expect(1_000_000 - left).toBeLessThanOrEqual(100_000 + 2 * (1_000_000 / 32));
    // Every lease counted, each granted in full; the CU leased are what the pool lost.
    expect(await metered.leases()).toEqual({
      granted: pool.leases,
      empty: 0,
      failed_open: 0,
      late: 0,
    });
    expect(await metered.leasedCu()).toBe(1_000_000 - left);
  });

  it('a new state starts a new pool, charged what this process spent that the state cannot hold yet', async () => {
    const clock = new FakeClock();
    const pool = new MemoryPool(clock);
    const estimate = new SpendEstimate(new UsageWindow(), pool, 'acct', LEASE);
    estimate.reset(1, 10_000);
    for (let i = 0; i < 3; i++) expect(await call(estimate, 100)).toBe(true);
    // 300 CU metered into the open window, not flushed: state 2 does not hold them.
    estimate.reset(2, 9_000);
    expect(await call(estimate, 100)).toBe(true);
    // Charged the 300, leased the call's 100 and a chunk of 500.
    expect(pool.left('acct', 2, 9_000)).toBe(9_000 - 300 - (100 + 500));
  });

  it('refuses once the pool is spent, even with its own estimate left; a newer state clears it', async () => {
    const clock = new FakeClock();
    const pool = new MemoryPool(clock);
    const metered = new Metered(pool);
    const estimate = new SpendEstimate(new UsageWindow(), metered.pool, 'acct', LEASE);
    estimate.reset(1, 1_000);
    // Another process took the whole pool.
    expect(pool.takeNow('acct', 1, 1_000, 1_000, 0)).toEqual({ ok: true, granted: 1_000 });
    expect(await call(estimate, 100)).toBe(false);
    expect(estimate.spent).toBe(true);
    expect(estimate.remainingCu).toBe(1_000);
    expect(await metered.leases()).toMatchObject({ granted: 0, empty: 1 });
    expect(await metered.leasedCu()).toBe(0);
    estimate.reset(2, 5_000);
    expect(estimate.spent).toBe(false);
    expect(await call(estimate, 100)).toBe(true);
    // The call's 100 and a chunk of 500, from the new state's pool.
    expect(await metered.leases()).toMatchObject({ granted: 1, empty: 1 });
    expect(await metered.leasedCu()).toBe(600);
  });

  it('pool unreachable: admits as the process alone would (its estimate), then charges the pool what it spent once it answers again', async () => {
    const clock = new FakeClock();
    const pool = new MemoryPool(clock);
    const metered = new Metered(pool);
    const estimate = new SpendEstimate(new UsageWindow(), metered.pool, 'acct', LEASE);
    estimate.reset(1, 10_000);
    pool.down = new Error('Connection is closed.');
    let admitted = 0;
    for (let i = 0; i < 50; i++) if (await call(estimate, 100)) admitted++;
    expect(admitted).toBe(50);
    // Tried again at most once per lease period while down.
    expect(pool.leases).toBe(1);
    clock.advance(249);
    await call(estimate, 100);
    expect(pool.leases).toBe(1);
    expect(await metered.leases()).toEqual({ granted: 0, empty: 0, failed_open: 1, late: 0 });
    clock.advance(1);
    pool.down = undefined;
    await call(estimate, 100);
    await Promise.resolve();
    expect(await metered.leases()).toEqual({ granted: 1, empty: 0, failed_open: 1, late: 0 });
    expect(await metered.leasedCu()).toBe(500);
    // The lease charged the 5,100 CU admitted while down (and granted a chunk): the pool knows.
    expect(pool.left('acct', 1, 10_000)).toBe(10_000 - 5_100 - 500);
    // And its own estimate stands throughout: 10,000 CU, not more.
    for (let i = 0; i < 200; i++) await call(estimate, 100);
    expect(estimate.remainingCu).toBeLessThanOrEqual(0);
    expect(estimate.remainingCu).toBeGreaterThan(-100);
  });

  it('a lease answered after its deadline: its grant covers what was admitted meanwhile, nothing is charged again', async () => {
    const clock = new FakeClock();
    const pool = new MemoryPool(clock);
    const metered = new Metered(pool);
    const estimate = new SpendEstimate(new UsageWindow(), metered.pool, 'acct', LEASE);
    estimate.reset(1, 10_000);
    let answerLate!: () => void;
    pool.take = (accountId, version, seedCu, wantedCu, chargedCu) => {
      pool.leases++;
      const late = new Promise<LeaseAnswer>((resolve) => {
        answerLate = () => resolve(pool.takeNow(accountId, version, seedCu, wantedCu, chargedCu));
      });
      return Promise.reject(new StoreTimeoutError(1_000, late));
    };
    expect(await call(estimate, 100)).toBe(true);
    answerLate();
    await new Promise((r) => setImmediate(r));
    pool.take = MemoryPool.prototype.take.bind(pool);
    clock.advance(250);
    await call(estimate, 100);
    await Promise.resolve();
    // The late answer granted the first lease (the call's 100 and a chunk of 500), which covers
    // the call admitted meanwhile; the next lease charges nothing more, takes a chunk of 500.
    expect(10_000 - pool.left('acct', 1, 10_000)).toBe(600 + 500);
    // The first lease failed open, then its answer came: counted late, its 600 CU leased.
    expect(await metered.leases()).toEqual({ granted: 1, empty: 0, failed_open: 1, late: 1 });
    expect(await metered.leasedCu()).toBe(600 + 500);
  });

  it('without a pool, or before the pools are known, it never asks anyone', () => {
    const estimate = new SpendEstimate();
    estimate.reset(1, 1_000);
    expect(estimate.pooled).toBe(false);
    expect(estimate.cover(100)).toBeUndefined();
    const pool = new MemoryPool(new FakeClock());
    const open = new SpendEstimate(new UsageWindow(), pool, 'acct', LEASE);
    open.reset(1, undefined);
    expect(open.cover(100)).toBeUndefined();
    expect(pool.leases).toBe(0);
  });
});

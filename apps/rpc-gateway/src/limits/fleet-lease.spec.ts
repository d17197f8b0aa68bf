import { FakeClock } from '@meridian/time';
import { StoreTimeoutError } from './fleet-bucket-store';
import { fleetLeases, type FleetLeaseStore, type LeaseSource } from './fleet-lease';
import type { LeaseAnswer, LeaseRequest } from './leased-rate-limiter';
import { RateLimiter } from './token-bucket';

const RPS = 20;
const ACCOUNT = 'acct';

/**
 * A stand-in for the Redis store (its own integration test runs the real one): the fleet bucket
 * is an in-memory bucket of the same `takeUpTo` rule, and the next lease can be made to time out
 * with its answer held back, to be released (or lost) later.
 */
class HeldBackStore implements FleetLeaseStore {
  readonly fleet: RateLimiter;
  readonly received: LeaseRequest[] = [];
  private next: 'answer' | 'time out' | 'refuse connection' = 'answer';
  private release: (() => void) | undefined;
  private lose: (() => void) | undefined;

  constructor(now: () => number) {
    this.fleet = new RateLimiter(now);
  }

  lease(request: LeaseRequest): Promise<LeaseAnswer> {
    this.received.push(request);
    const mode = this.next;
    this.next = 'answer';
    if (mode === 'refuse connection') return Promise.reject(new Error('ECONNREFUSED'));
    const run = () =>
      this.fleet.lease(
        request.accountId,
        request.needed,
        request.wanted,
        request.returned,
        request.ratePerSecond,
      );
    if (mode === 'answer') return Promise.resolve(run());
    // The command reaches the store (it runs when released), but not before the deadline.
    const late = new Promise<LeaseAnswer>((resolve, reject) => {
      this.release = () => resolve(run());
      this.lose = () => reject(new Error('connection lost'));
    });
    void late.catch(() => undefined);
    return Promise.reject(new StoreTimeoutError(200, late));
  }

  timeOutNext(): void {
    this.next = 'time out';
  }
  refuseNext(): void {
    this.next = 'refuse connection';
  }
  /** The held-back lease runs in the store now and its answer arrives. */
  async answerLate(): Promise<void> {
    this.release!();
    await settled();
  }
  async loseLate(): Promise<void> {
    this.lose!();
    await settled();
  }
}

/** Lets the settlement's promise chain run (it is fire-and-forget by design). */
const settled = () => new Promise((resolve) => setImmediate(resolve));

function setUp() {
  const clock = new FakeClock();
  const now = () => clock.now().getTime();
  const store = new HeldBackStore(now);
  const sources: LeaseSource[] = [];
  const ask = fleetLeases(store, new RateLimiter(now), now, (s) => sources.push(s));
  const lease = (needed: number, wanted: number) =>
    ask({ accountId: ACCOUNT, ratePerSecond: RPS, needed, wanted, returned: 0 });
  /** What the fleet bucket holds, as what it would grant now (needed 0, all of it wanted). */
  const fleetHolds = () => {
    const probe = store.fleet.lease(ACCOUNT, 0, 1_000, 0, RPS);
    if (probe.ok) store.fleet.lease(ACCOUNT, 0, 0, probe.granted, RPS); // put them back
    return probe;
  };
  return { clock, store, sources, lease, fleetHolds };
}

describe('fleet leases (ADR 0102: shared store, per-process fallback, late answers settled)', () => {
  it('takes leases from the fleet bucket while the store answers', async () => {
    const { lease, sources, fleetHolds } = setUp();
    await expect(lease(1, 5)).resolves.toEqual({ ok: true, granted: 5 });
    expect(sources).toEqual(['fleet']);
    expect(fleetHolds()).toEqual({ ok: true, granted: RPS - 5 });
  });

  it('a lease that timed out on an empty fleet bucket and was refused late is owed to the fleet', async () => {
    const { store, lease, sources, fleetHolds } = setUp();
    await expect(lease(RPS, RPS)).resolves.toEqual({ ok: true, granted: RPS }); // drained
    store.timeOutNext();
    // The fallback is this process's own bucket: it grants what the fleet would have refused.
    await expect(lease(1, 3)).resolves.toEqual({ ok: true, granted: 3 });
    expect(sources).toEqual(['fleet', 'local']);
    await store.answerLate(); // the fleet refuses it: 3 tokens were spent beyond the fleet's
    expect(store.received.at(-1)).toMatchObject({ needed: 0, wanted: 0, returned: -3 });
    // The bucket owes 3: the next token is 4 tokens of refill away at 20 per second.
    expect(fleetHolds()).toEqual({ ok: false, retryAfterMs: 150 });
    await expect(lease(1, 1)).resolves.toEqual({ ok: false, retryAfterMs: 200 });
  });

  it("a late grant equal to the fallback's settles nothing: the fleet bucket paid for it", async () => {
    const { store, lease, fleetHolds } = setUp();
    store.timeOutNext();
    await expect(lease(1, 3)).resolves.toEqual({ ok: true, granted: 3 });
    expect(fleetHolds()).toEqual({ ok: true, granted: RPS });
    await store.answerLate(); // the fleet granted the same 3
    expect(store.received).toHaveLength(1);
    expect(fleetHolds()).toEqual({ ok: true, granted: RPS - 3 });
  });

  it("a late grant smaller than the fallback's: the difference is owed", async () => {
    const { store, lease, fleetHolds } = setUp();
    await lease(RPS - 2, RPS - 2); // the fleet holds 2
    store.timeOutNext();
    await expect(lease(1, 3)).resolves.toEqual({ ok: true, granted: 3 }); // the fallback's 3
    await store.answerLate(); // the fleet granted its 2
    expect(store.received.at(-1)).toMatchObject({ needed: 0, wanted: 0, returned: -1 });
    expect(fleetHolds()).toEqual({ ok: false, retryAfterMs: 50 });
  });

  it('a late grant for a lease the fallback refused: nobody will spend it, so it all goes back', async () => {
    const { store, lease, fleetHolds } = setUp();
    // This process's own bucket is drained by a fallback whose answer never came.
    store.timeOutNext();
    await expect(lease(RPS, RPS)).resolves.toEqual({ ok: true, granted: RPS });
    await store.loseLate();
    store.timeOutNext();
    await expect(lease(1, 5)).resolves.toMatchObject({ ok: false });
    await store.answerLate(); // the fleet granted 5
    expect(store.received.at(-1)).toMatchObject({ needed: 0, wanted: 0, returned: 5 });
    expect(fleetHolds()).toEqual({ ok: true, granted: RPS });
  });

  it('a late refusal of a lease the fallback refused too settles nothing', async () => {
    const { store, lease, fleetHolds } = setUp();
    await lease(RPS, RPS); // the fleet is empty
    store.timeOutNext();
    await lease(RPS, RPS); // so is this process's own bucket now
    await store.answerLate(); // refused by the fleet: 20 owed
    store.timeOutNext();
    await expect(lease(1, 1)).resolves.toMatchObject({ ok: false });
    const before = store.received.length;
    await store.answerLate();
    expect(store.received).toHaveLength(before);
    expect(fleetHolds()).toEqual({ ok: false, retryAfterMs: 1_000 });
  });

  it('a timed-out lease never answered (connection lost) settles nothing: the per-process allowance stands', async () => {
    const { store, lease, fleetHolds } = setUp();
    store.timeOutNext();
    await expect(lease(1, 3)).resolves.toEqual({ ok: true, granted: 3 });
    await store.loseLate();
    expect(store.received).toHaveLength(1);
    expect(fleetHolds()).toEqual({ ok: true, granted: RPS });
  });

  it('a store that refuses the connection falls back with nothing to settle', async () => {
    const { store, lease, sources } = setUp();
    store.refuseNext();
    await expect(lease(1, 2)).resolves.toEqual({ ok: true, granted: 2 });
    await settled();
    expect(store.received).toHaveLength(1);
    expect(sources).toEqual(['local']);
  });
});

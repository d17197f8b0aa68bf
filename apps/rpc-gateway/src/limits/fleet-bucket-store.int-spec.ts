import { randomBytes } from 'node:crypto';
import { fullBucket, perSecond, takeUpTo, type Bucket } from '@meridian/rate-limits';
import fc from 'fast-check';
import { FleetBucketStore } from './fleet-bucket-store';

const REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';

describe('fleet bucket store (Redis, ADR 0102)', () => {
  const prefix = `test:rps:${randomBytes(6).toString('hex')}:`;
  let store: FleetBucketStore;

  beforeAll(async () => {
    store = new FleetBucketStore({ url: REDIS_URL, keyPrefix: prefix, commandTimeoutMs: 2_000 });
    await store.ready();
  });
  afterAll(() => store.close());

  it('the Lua script answers exactly what takeUpTo answers, for any sequence of leases', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 500 }),
        fc.array(
          fc.record({
            afterMs: fc.integer({ min: 0, max: 1_500 }),
            needed: fc.integer({ min: 0, max: 30 }),
            extra: fc.integer({ min: 0, max: 30 }),
            returned: fc.integer({ min: 0, max: 10 }),
          }),
          { minLength: 1, maxLength: 25 },
        ),
        async (rate, steps) => {
          const accountId = `acct-${run++}`;
          const limit = perSecond(rate);
          let now = 1_767_225_600_000;
          let bucket: Bucket | undefined;
          for (const step of steps) {
            now += step.afterMs;
            bucket ??= fullBucket(limit, now);
            const needed = Math.min(step.needed, limit.burst);
            const local = takeUpTo(bucket, needed, needed + step.extra, step.returned, limit, now);
            const remote = await store.lease(
              {
                accountId,
                ratePerSecond: rate,
                needed,
                wanted: needed + step.extra,
                returned: step.returned,
              },
              now,
            );
            expect(remote).toEqual(local);
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('one bucket for every holder: two stores never grant more than the bucket holds', async () => {
    const other = new FleetBucketStore({
      url: REDIS_URL,
      keyPrefix: prefix,
      commandTimeoutMs: 2_000,
    });
    await other.ready();
    const now = Date.now();
    const ask = (s: FleetBucketStore) =>
      s.lease({ accountId: 'shared', ratePerSecond: 20, needed: 1, wanted: 3, returned: 0 }, now);
    let granted = 0;
    for (let i = 0; i < 20; i++) {
      const answers = await Promise.all([ask(store), ask(other)]);
      for (const a of answers) if (a.ok) granted += a.granted;
    }
    expect(granted).toBe(20);
    await other.close();
  });

  it('fails fast while Redis is unreachable (no offline queue)', async () => {
    const down = new FleetBucketStore({
      url: 'redis://127.0.0.1:1',
      keyPrefix: prefix,
      commandTimeoutMs: 200,
    });
    const started = Date.now();
    await expect(
      down.lease({ accountId: 'a', ratePerSecond: 1, needed: 1, wanted: 1, returned: 0 }, started),
    ).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(1_000);
    await down.close();
  });
});

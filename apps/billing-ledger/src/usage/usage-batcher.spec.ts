import type { UsageRecorded } from '@meridian/contracts';
import type { UsageOutcome } from '../ledger/ledger.service';
import { UsageBatcher } from './usage-batcher';

const event = (id: string) => ({ id, accountId: 'acc_1' }) as unknown as UsageRecorded;

describe('UsageBatcher', () => {
  it('applies events submitted together in one call and answers each caller', async () => {
    const calls: string[][] = [];
    const batcher = new UsageBatcher<UsageRecorded, UsageOutcome>(async (events) => {
      calls.push(events.map((e) => e.id));
      return events.map((e) => ({ status: e.id === 'b' ? 'duplicate' : 'applied' }));
    });
    const outcomes = await Promise.all(['a', 'b', 'c'].map((id) => batcher.submit(event(id))));
    expect(calls).toEqual([['a', 'b', 'c']]);
    expect(outcomes.map((o) => o.status)).toEqual(['applied', 'duplicate', 'applied']);
  });

  it('fails every caller of a failed batch and keeps serving later ones', async () => {
    let fail = true;
    const batcher = new UsageBatcher<UsageRecorded, UsageOutcome>(async (events) => {
      if (fail) throw new Error('db down');
      return events.map(() => ({ status: 'applied' as const }));
    }, 2);
    const first = await Promise.allSettled([
      batcher.submit(event('a')),
      batcher.submit(event('b')),
    ]);
    expect(first.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    await expect(batcher.submit(event('c'))).resolves.toEqual({ status: 'applied' });
  });
});

describe('UsageBatcher (parallel batches)', () => {
  it('splits a burst into batches of at most maxBatch with at most `parallel` in flight', async () => {
    const sizes: number[] = [];
    let running = 0;
    let peak = 0;
    const batcher = new UsageBatcher(
      async (events) => {
        running += 1;
        peak = Math.max(peak, running);
        sizes.push(events.length);
        await new Promise((r) => setTimeout(r, 5));
        running -= 1;
        return events.map(() => ({ status: 'applied' as const }));
      },
      4,
      2,
    );
    const ids = Array.from({ length: 19 }, (_, i) => `e${i}`);
    const outcomes = await Promise.all(ids.map((id) => batcher.submit(event(id))));
    expect(outcomes).toHaveLength(19);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(4);
    expect(sizes.reduce((s, n) => s + n, 0)).toBe(19);
    expect(peak).toBe(2);
    // Idle again: a later event is applied by a fresh worker.
    await expect(batcher.submit(event('late'))).resolves.toEqual({ status: 'applied' });
  });
});

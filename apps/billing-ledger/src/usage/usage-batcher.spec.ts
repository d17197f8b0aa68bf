import type { UsageRecorded } from '@meridian/contracts';
import { UsageBatcher } from './usage-batcher';

const event = (id: string) => ({ id, accountId: 'acc_1' }) as unknown as UsageRecorded;

describe('UsageBatcher', () => {
  it('applies events submitted together in one call and answers each caller', async () => {
    const calls: string[][] = [];
    const batcher = new UsageBatcher(async (events) => {
      calls.push(events.map((e) => e.id));
      return events.map((e) => ({ status: e.id === 'b' ? 'duplicate' : 'applied' }));
    });
    const outcomes = await Promise.all(['a', 'b', 'c'].map((id) => batcher.submit(event(id))));
    expect(calls).toEqual([['a', 'b', 'c']]);
    expect(outcomes.map((o) => o.status)).toEqual(['applied', 'duplicate', 'applied']);
  });

  it('fails every caller of a failed batch and keeps serving later ones', async () => {
    let fail = true;
    const batcher = new UsageBatcher(async (events) => {
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

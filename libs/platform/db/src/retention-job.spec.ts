import { FakeClock, MINUTE, SECOND, type Clock } from '@meridian/time';
import { Registry } from 'prom-client';
import type { PruneBatch } from './retention-pruner';
import { RetentionJob } from './retention-job';

/** A log in memory: rows by the moment they were written, deleted oldest first. */
function memoryLog(moments: number[]) {
  const rows = [...moments].sort((a, b) => a - b);
  let statements = 0;
  const deleteBatch: PruneBatch = async (before, limit) => {
    statements += 1;
    let n = 0;
    while (n < limit && rows.length > 0 && rows[0]! < before.getTime()) {
      rows.shift();
      n += 1;
    }
    return n;
  };
  return { rows, deleteBatch, statements: () => statements };
}

/** An app's job as the apps write theirs: the delete, the window, the interval, the metric. */
class TestRetention extends RetentionJob {
  constructor(deleteBatch: PruneBatch, clock: Clock, intervalMs: number, registry: Registry) {
    super(
      deleteBatch,
      { name: 'test log', clock, retentionMs: MINUTE, intervalMs, batch: 2 },
      { registry, metric: { name: 'test_log_pruned_total', help: 'Test rows deleted' } },
    );
  }
}

async function counted(registry: Registry): Promise<number | undefined> {
  return (await registry.getSingleMetric('test_log_pruned_total')?.get())?.values[0]?.value;
}

describe('RetentionJob', () => {
  const start = new Date('2026-12-01T00:00:00Z').getTime();

  it('counts the rows each run deleted in its metric, on the given registry', async () => {
    const registry = new Registry();
    const clock = new FakeClock(new Date(start + 10 * MINUTE));
    const log = memoryLog([1, 2, 3, 9.5, 10.5].map((m) => start + m * MINUTE));
    const job = new TestRetention(log.deleteBatch, clock, 0, registry);

    const metric = await registry.getSingleMetric('test_log_pruned_total')!.get();
    expect(metric).toMatchObject({ help: 'Test rows deleted', type: 'counter' });
    expect(await counted(registry)).toBe(0);

    // Before minute 9: three rows, in statements of two.
    expect(await job.prune()).toBe(3);
    expect(await counted(registry)).toBe(3);
    expect(await job.prune()).toBe(0);
    expect(await counted(registry)).toBe(3);
    clock.set(new Date(start + 11 * MINUTE));
    expect(await job.prune()).toBe(1);
    expect(await counted(registry)).toBe(4);
    expect(log.rows).toEqual([start + 10.5 * MINUTE]);
  });

  it('starts its timer on application bootstrap and stops it on shutdown', async () => {
    jest.useFakeTimers();
    try {
      const registry = new Registry();
      const clock = new FakeClock(new Date(start + 10 * MINUTE));
      const log = memoryLog([1, 2].map((m) => start + m * MINUTE));
      const job = new TestRetention(log.deleteBatch, clock, 10 * SECOND, registry);

      // Not before the app is up.
      await jest.advanceTimersByTimeAsync(MINUTE);
      expect(log.statements()).toBe(0);

      job.onApplicationBootstrap();
      await jest.advanceTimersByTimeAsync(10 * SECOND);
      expect(log.rows).toEqual([]);
      expect(await counted(registry)).toBe(2);
      const runs = log.statements();

      await job.onApplicationShutdown();
      await jest.advanceTimersByTimeAsync(MINUTE);
      expect(log.statements()).toBe(runs);
    } finally {
      jest.useRealTimers();
    }
  });
});

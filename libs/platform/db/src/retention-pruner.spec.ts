import { FakeClock, MINUTE, SECOND } from '@meridian/time';
import { DbJobGate } from './db-job-gate';
import { RetentionPruner, type PruneBatch } from './retention-pruner';

/** A log in memory: rows by the moment they were written, deleted as the SQL of a pruner would. */
function memoryLog(moments: number[]) {
  const rows = [...moments].sort((a, b) => a - b);
  const statements: Array<{ before: number; limit: number }> = [];
  const deleteBatch: PruneBatch = async (before, limit) => {
    statements.push({ before: before.getTime(), limit });
    let n = 0;
    while (n < limit && rows.length > 0 && rows[0]! < before.getTime()) {
      rows.shift();
      n += 1;
    }
    return n;
  };
  return { rows, statements, deleteBatch };
}

describe('RetentionPruner', () => {
  const start = new Date('2026-12-01T00:00:00Z').getTime();

  it('deletes what is older than the retention by the clock, oldest first, within a run budget', async () => {
    const clock = new FakeClock(new Date(start + 10 * MINUTE));
    const log = memoryLog([1, 2, 3, 4, 5, 6, 7].map((m) => start + m * MINUTE));
    const pruned: number[] = [];
    const pruner = new RetentionPruner(log.deleteBatch, {
      name: 'test log',
      clock,
      retentionMs: 4 * MINUTE,
      intervalMs: 0,
      batch: 2,
      batchesPerRun: 2,
      onPruned: (n) => pruned.push(n),
    });

    // Expired: the rows of minutes 1–5 (before minute 6). Two statements of two: budget spent.
    expect(await pruner.prune()).toBe(4);
    expect(log.rows).toEqual([5, 6, 7].map((m) => start + m * MINUTE));
    expect(log.statements).toEqual([
      { before: start + 6 * MINUTE, limit: 2 },
      { before: start + 6 * MINUTE, limit: 2 },
    ]);
    // The next run finds one, and stops at the statement that found fewer than a batch.
    expect(await pruner.prune()).toBe(1);
    expect(log.statements).toHaveLength(3);
    expect(await pruner.prune()).toBe(0);
    // The row at exactly the limit stays; a second later it has expired.
    clock.set(new Date(start + 10 * MINUTE + SECOND));
    expect(log.rows).toEqual([6, 7].map((m) => start + m * MINUTE));
    expect(await pruner.prune()).toBe(1);
    expect(pruned).toEqual([4, 1, 1]);
  });

  /** A pruner of `log` whose statements wait until `release` is called. */
  function gatedPruner(log: ReturnType<typeof memoryLog>, batch?: number) {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow: PruneBatch = async (before, limit) => {
      await gate;
      return log.deleteBatch(before, limit);
    };
    const pruner = new RetentionPruner(slow, {
      name: 'test log',
      clock: new FakeClock(new Date(start + MINUTE)),
      retentionMs: SECOND,
      intervalMs: 0,
      ...(batch === undefined ? {} : { batch }),
    });
    return { pruner, release };
  }

  it('runs one prune at a time: a call during a run joins it', async () => {
    const log = memoryLog([start]);
    const { pruner, release } = gatedPruner(log);
    const [first, second] = [pruner.prune(), pruner.prune()];
    release();
    expect(await Promise.all([first, second])).toEqual([1, 1]);
    expect(log.statements).toHaveLength(1);
  });

  it('a stop during a run ends it after the statement in flight', async () => {
    const log = memoryLog([start, start + 1, start + 2, start + 3]);
    const { pruner, release } = gatedPruner(log, 1);
    const running = pruner.prune();
    const stopped = pruner.stop();
    release();
    await stopped;
    expect(await running).toBe(1);
    expect(log.rows).toEqual([start + 1, start + 2, start + 3]);
  });

  it('logs a run that fails with what it deleted before, and never throws', async () => {
    const log = memoryLog([start, start + 1, start + 2]);
    let calls = 0;
    const failing: PruneBatch = async (before, limit) => {
      calls += 1;
      if (calls === 2) throw new Error('canceling statement due to lock timeout');
      return log.deleteBatch(before, limit);
    };
    const warn = jest.fn();
    const pruned: number[] = [];
    const pruner = new RetentionPruner(failing, {
      name: 'delivery log',
      clock: new FakeClock(new Date(start + MINUTE)),
      retentionMs: SECOND,
      intervalMs: 0,
      batch: 2,
      logger: { warn },
      onPruned: (n) => pruned.push(n),
    });
    await expect(pruner.prune()).resolves.toBe(2);
    expect(warn).toHaveBeenCalledWith(
      { err: 'canceling statement due to lock timeout', deleted: 2 },
      'delivery log retention failed; the next run retries',
    );
    expect(pruned).toEqual([2]);
    // The next run retries and finishes the job.
    await expect(pruner.prune()).resolves.toBe(1);
    expect(log.rows).toEqual([]);
  });

  it('skips its runs quietly while Postgres is not connected (its gate closed), then prunes', async () => {
    const log = memoryLog([start, start + 1]);
    const dataSource = { isInitialized: false };
    const gate = DbJobGate.of(dataSource);
    const warn = jest.fn();
    const pruner = new RetentionPruner(log.deleteBatch, {
      name: 'delivery log',
      clock: new FakeClock(new Date(start + MINUTE)),
      retentionMs: SECOND,
      intervalMs: 0,
      logger: { warn },
      gate,
    });
    for (let run = 0; run < 3; run++) await expect(pruner.prune()).resolves.toBe(0);
    expect(log.statements).toEqual([]);
    expect(warn).not.toHaveBeenCalled();
    dataSource.isInitialized = true;
    await expect(pruner.prune()).resolves.toBe(2);
  });

  it('a run failing because Postgres is out of reach closes the gate, no warning; runs again when it answers', async () => {
    jest.useFakeTimers();
    try {
      const log = memoryLog([start, start + 1]);
      const postgres = { up: false };
      const refused = () =>
        Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
      const dataSource = {
        isInitialized: true,
        query: async () => {
          if (!postgres.up) throw refused();
          return [];
        },
      };
      const lost = jest.fn();
      const gate = DbJobGate.of(dataSource).configure({
        log: { lost, restored: jest.fn() },
        probeBackoffMs: [100],
      });
      const warn = jest.fn();
      const pruner = new RetentionPruner(
        async (before, limit) => {
          if (!postgres.up) throw refused();
          return log.deleteBatch(before, limit);
        },
        {
          name: 'attempt log',
          clock: new FakeClock(new Date(start + MINUTE)),
          retentionMs: SECOND,
          intervalMs: 0,
          logger: { warn },
          gate,
        },
      );
      for (let run = 0; run < 3; run++) await expect(pruner.prune()).resolves.toBe(0);
      expect(warn).not.toHaveBeenCalled();
      expect(lost).toHaveBeenCalledTimes(1);
      postgres.up = true;
      await jest.advanceTimersByTimeAsync(100);
      await expect(pruner.prune()).resolves.toBe(2);
      gate.stop();
    } finally {
      jest.useRealTimers();
    }
  });

  it('runs every interval once started, never with an interval of 0, and not after stop', async () => {
    jest.useFakeTimers();
    try {
      const log = memoryLog([start, start + 1]);
      const options = {
        name: 'test log',
        clock: new FakeClock(new Date(start + MINUTE)),
        retentionMs: SECOND,
        batch: 1,
        batchesPerRun: 1,
      };
      const off = new RetentionPruner(log.deleteBatch, { ...options, intervalMs: 0 });
      off.start();
      await jest.advanceTimersByTimeAsync(MINUTE);
      expect(log.statements).toHaveLength(0);

      const pruner = new RetentionPruner(log.deleteBatch, { ...options, intervalMs: 10 * SECOND });
      pruner.start();
      await jest.advanceTimersByTimeAsync(10 * SECOND);
      expect(log.rows).toEqual([start + 1]);
      await pruner.stop();
      await jest.advanceTimersByTimeAsync(MINUTE);
      expect(log.rows).toEqual([start + 1]);
    } finally {
      jest.useRealTimers();
    }
  });
});

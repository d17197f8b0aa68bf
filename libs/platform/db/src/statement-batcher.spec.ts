import { StatementBatcher } from './statement-batcher';

describe('StatementBatcher', () => {
  it('carries the items submitted in one turn in one statement, each caller its own result', async () => {
    const statements: number[][] = [];
    const batcher = new StatementBatcher<number, number>(async (items) => {
      statements.push([...items]);
      return items.map((n) => n * 10);
    });
    const results = await Promise.all([1, 2, 3].map((n) => batcher.submit(n)));
    expect(results).toEqual([10, 20, 30]);
    expect(statements).toEqual([[1, 2, 3]]);
  });

  it('holds items submitted while the statements run for the next one, up to maxBatch each', async () => {
    const statements: number[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const batcher = new StatementBatcher<number, number>(
      async (items) => {
        statements.push([...items]);
        if (statements.length === 1) await gate;
        return [...items];
      },
      { maxBatch: 2, parallel: 1 },
    );
    const first = batcher.submit(0);
    await new Promise((resolve) => setImmediate(resolve));
    const later = [1, 2, 3].map((n) => batcher.submit(n));
    release();
    await Promise.all([first, ...later]);
    expect(statements).toEqual([[0], [1, 2], [3]]);
  });

  it('settles a caller only after its statement completed', async () => {
    let done = false;
    const batcher = new StatementBatcher<number, boolean>(async (items) => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      done = true;
      return items.map(() => true);
    });
    await batcher.submit(1);
    expect(done).toBe(true);
  });

  it('runs the items of a failed statement one by one: only the bad item fails', async () => {
    const batcher = new StatementBatcher<number, number>(async (items) => {
      if (items.includes(13)) throw new Error('check violation');
      return [...items];
    });
    const results = await Promise.allSettled([12, 13, 14].map((n) => batcher.submit(n)));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toEqual(new Error('check violation'));
  });

  it('fails every caller when every statement fails (the database is away)', async () => {
    const batcher = new StatementBatcher<number, number>(async () => {
      throw new Error('connection refused');
    });
    const results = await Promise.allSettled([1, 2].map((n) => batcher.submit(n)));
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  });

  it('with retryAlone off, fails every caller of a failed statement at once and keeps serving later ones', async () => {
    let fail = true;
    const statements: number[][] = [];
    const batcher = new StatementBatcher<number, number>(
      async (items) => {
        statements.push([...items]);
        if (fail) throw new Error('serialization failure');
        return [...items];
      },
      { retryAlone: false },
    );
    const results = await Promise.allSettled([1, 2].map((n) => batcher.submit(n)));
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(statements).toEqual([[1, 2]]);
    fail = false;
    await expect(batcher.submit(3)).resolves.toBe(3);
  });

  it('with retryAlone a predicate, runs items alone only for the errors it names', async () => {
    const overflow = Object.assign(new Error('value out of range'), { code: '22003' });
    const statements: number[][] = [];
    let conflict = true;
    const batcher = new StatementBatcher<number, number>(
      async (items) => {
        statements.push([...items]);
        if (items.includes(13)) throw overflow;
        if (conflict && items.length > 1) throw new Error('serialization failure');
        return [...items];
      },
      { retryAlone: (error) => error === overflow },
    );
    const conflicted = await Promise.allSettled([1, 2].map((n) => batcher.submit(n)));
    expect(conflicted.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(statements).toEqual([[1, 2]]);
    conflict = false;
    const results = await Promise.allSettled([3, 13, 4].map((n) => batcher.submit(n)));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(statements.slice(1)).toEqual([[3, 13, 4], [3], [13], [4]]);
  });

  it('splits a burst into statements of at most maxBatch with at most `parallel` in flight', async () => {
    const sizes: number[] = [];
    let running = 0;
    let peak = 0;
    const batcher = new StatementBatcher<number, number>(
      async (items) => {
        running += 1;
        peak = Math.max(peak, running);
        sizes.push(items.length);
        await new Promise((resolve) => setTimeout(resolve, 5));
        running -= 1;
        return [...items];
      },
      { maxBatch: 4, parallel: 2 },
    );
    const results = await Promise.all(Array.from({ length: 19 }, (_, i) => batcher.submit(i)));
    expect(results).toEqual(Array.from({ length: 19 }, (_, i) => i));
    expect(Math.max(...sizes)).toBeLessThanOrEqual(4);
    expect(sizes.reduce((sum, n) => sum + n, 0)).toBe(19);
    expect(peak).toBe(2);
    // Idle again: a later item is carried by a fresh worker.
    await expect(batcher.submit(99)).resolves.toBe(99);
  });
});

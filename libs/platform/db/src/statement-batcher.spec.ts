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
});

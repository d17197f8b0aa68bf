import { createAppDataSource } from './data-source';
import { isDatabaseUnreachable } from './database-unreachable';

/**
 * Against the real Postgres: a query that finds every pooled connection taken waits at most
 * `acquireTimeoutMs`, then fails as Postgres out of reach (503 `database_unavailable` at the
 * REST edges), instead of waiting for ever (QA: a full pool hung the dashboard until restart).
 */
describe('createAppDataSource: the wait for a pooled connection is bounded', () => {
  const url = process.env['TEST_DATABASE_URL'] || 'postgres://postgres@127.0.0.1:5432/postgres';

  it('fails a query past acquireTimeoutMs with an error read as Postgres unreachable', async () => {
    const dataSource = createAppDataSource({
      url,
      schema: 'public',
      entities: [],
      migrations: [],
      poolSize: 1,
      acquireTimeoutMs: 300,
    });
    await dataSource.initialize();
    const holder = dataSource.createQueryRunner();
    try {
      await holder.connect();
      const started = Date.now();
      const error = await dataSource.query('SELECT 1').then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(String((error as Error | undefined)?.message)).toMatch(/timeout exceeded/);
      expect(isDatabaseUnreachable(error)).toBe(true);
      // Once a connection is free again, queries answer.
      await holder.release();
      expect(await dataSource.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    } finally {
      if (!holder.isReleased) await holder.release();
      await dataSource.destroy();
    }
  });

  it('bounds the wait by default', () => {
    const dataSource = createAppDataSource({ url, schema: 'public', entities: [], migrations: [] });
    expect(dataSource.options.extra).toMatchObject({ connectionTimeoutMillis: 10_000 });
  });
});

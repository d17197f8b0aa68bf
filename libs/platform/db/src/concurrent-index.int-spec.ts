import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { createIndexConcurrently, dropIndexConcurrently } from './concurrent-index';
import { createAppDataSource } from './data-source';

/**
 * Against the real Postgres: an index built CONCURRENTLY whose first build failed (a duplicate
 * under a unique index leaves it INVALID) is built again by the next run, where
 * `CREATE INDEX CONCURRENTLY IF NOT EXISTS` alone keeps the invalid one.
 */
describe('createIndexConcurrently: a failed build is built again', () => {
  const url = process.env['TEST_DATABASE_URL'] || 'postgres://postgres@127.0.0.1:5432/postgres';
  const schema = `concurrent_index_${randomBytes(4).toString('hex')}`;
  const index = { schema, name: 'items_key', on: 'items (key)', unique: true };
  let ds: DataSource;

  const validity = async (): Promise<boolean[]> =>
    (
      (await ds.query(
        `SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
          JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2`,
        [schema, index.name],
      )) as Array<{ valid: boolean }>
    ).map((row) => row.valid);

  beforeAll(async () => {
    ds = createAppDataSource({ url, schema: 'public', entities: [], migrations: [], poolSize: 2 });
    await ds.initialize();
    await ds.query(`CREATE SCHEMA ${schema}`);
    await ds.query(`CREATE TABLE ${schema}.items (key text NOT NULL)`);
  });

  afterAll(async () => {
    await ds?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await ds?.destroy();
  });

  it('drops the invalid index a failed build left and builds it valid; drops it again', async () => {
    await ds.query(`INSERT INTO ${schema}.items VALUES ('a'), ('a')`);
    await expect(createIndexConcurrently(ds, index)).rejects.toThrow(/could not create unique/);
    expect(await validity()).toEqual([false]);
    // What `IF NOT EXISTS` alone does on the next run: nothing, the index stays invalid.
    await ds.query(
      `CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS items_key ON ${schema}.items (key)`,
    );
    expect(await validity()).toEqual([false]);

    await ds.query(`DELETE FROM ${schema}.items`);
    await createIndexConcurrently(ds, index);
    expect(await validity()).toEqual([true]);
    await createIndexConcurrently(ds, index);
    expect(await validity()).toEqual([true]);

    await dropIndexConcurrently(ds, index);
    expect(await validity()).toEqual([]);
    await dropIndexConcurrently(ds, index);
  });
});

import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import type { DataSource, MigrationInterface } from 'typeorm';
import {
  createAppDataSource,
  revertMigrations,
  runMigrations,
  type AppDataSourceOptions,
} from '@meridian/platform-db';
import { createTestDatabase, type TestDatabase } from '@meridian/testing';
import { APPS_WITH_DATABASE } from './migrate-all';

/**
 * Every app's migrations reverted and applied again on a real Postgres, through the function
 * behind `migrate.ts revert` (deploy/README.md "Rollback"): each down() brings back the schema
 * its up() found, migrations built CONCURRENTLY included, and the data the downs keep is kept.
 */
const root = resolve(__dirname, '../..');

interface AppDatabase {
  SCHEMA: string;
  dataSourceOptions(url: string): AppDataSourceOptions;
}

/** The app's own data source module (an app is no library: loaded by path, as the manifests test does). */
async function appDatabase(app: string): Promise<AppDatabase> {
  return (await import(join(root, 'apps', app, 'src', 'db', 'data-source.ts'))) as AppDatabase;
}

type MigrationClass = new () => MigrationInterface;

/**
 * What a migration can change in the app's schema, each object as one line: relations (with
 * storage options and partition bounds), columns in order, indexes (validity too), constraints,
 * views, routines, types and triggers. TypeORM's own `migrations` table is left out.
 */
async function schemaSnapshot(ds: DataSource, schema: string): Promise<Record<string, string[]>> {
  const hidden = `WITH own AS (
      SELECT coalesce(to_regclass(quote_ident($1) || '.migrations')::oid, 0) AS oid
    ), hidden AS (
      SELECT oid FROM own
      UNION SELECT d.objid FROM pg_depend d, own
       WHERE d.refobjid = own.oid AND d.classid = 'pg_class'::regclass
      UNION SELECT i.indexrelid FROM pg_index i, own WHERE i.indrelid = own.oid
    )`;
  const lines = async (sql: string): Promise<string[]> =>
    ((await ds.query(`${hidden} ${sql}`, [schema])) as Array<{ line: string }>).map(
      (row) => row.line,
    );
  return {
    relations: await lines(`
      SELECT c.relname || ' ' || c.relkind::text || ' ' || coalesce(array_to_string(c.reloptions, ','), '-')
             || ' ' || coalesce(pg_get_expr(c.relpartbound, c.oid), '-') AS line
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.oid NOT IN (SELECT oid FROM hidden) ORDER BY 1`),
    columns: await lines(`
      SELECT c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
             || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END
             || coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), '')
             || CASE a.attcompression WHEN 'l' THEN ' lz4' WHEN 'p' THEN ' pglz' ELSE '' END AS line
        FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
        LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
       WHERE n.nspname = $1 AND a.attnum > 0 AND NOT a.attisdropped
         AND c.relkind IN ('r', 'p', 'v') AND c.oid NOT IN (SELECT oid FROM hidden)
       ORDER BY c.relname, a.attnum`),
    indexes: await lines(`
      SELECT pg_get_indexdef(i.indexrelid) || CASE WHEN i.indisvalid THEN '' ELSE ' (invalid)' END AS line
        FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.oid NOT IN (SELECT oid FROM hidden) ORDER BY 1`),
    constraints: await lines(`
      SELECT c.relname || ' ' || co.conname || ' ' || pg_get_constraintdef(co.oid) AS line
        FROM pg_constraint co JOIN pg_class c ON c.oid = co.conrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.oid NOT IN (SELECT oid FROM hidden) ORDER BY 1`),
    views: await lines(`
      SELECT viewname || ': ' || definition AS line FROM pg_views
       WHERE schemaname = $1 ORDER BY 1`),
    routines: await lines(`
      SELECT p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')' AS line
        FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
       WHERE n.nspname = $1 ORDER BY 1`),
    types: await lines(`
      SELECT t.typname || ' ' || t.typtype::text AS line
        FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
       WHERE n.nspname = $1 AND t.typrelid = 0 AND t.typcategory <> 'A' ORDER BY 1`),
    triggers: await lines(`
      SELECT pg_get_triggerdef(t.oid) AS line
        FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND NOT t.tgisinternal AND c.oid NOT IN (SELECT oid FROM hidden)
       ORDER BY 1`),
  };
}

const EMPTY = {
  relations: [],
  columns: [],
  indexes: [],
  constraints: [],
  views: [],
  routines: [],
  types: [],
  triggers: [],
};

describe.each(APPS_WITH_DATABASE)('%s migrations reverted (real Postgres)', (app) => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ prefix: 'revert' });
  });
  afterAll(() => db.drop());

  it("each down() brings back the schema its up() found; all reverted leave nothing of the app's; all apply again", async () => {
    const { SCHEMA, dataSourceOptions } = await appDatabase(app);
    const options = dataSourceOptions(db.url);
    const classes = options.migrations as MigrationClass[];
    const names = classes.map((migration) => new migration().name!);
    expect(names.length).toBeGreaterThan(0);

    // The schema after the first i migrations, for every i: what reverting down to i must give.
    const after: Array<Record<string, string[]>> = [];
    for (let i = 0; i <= classes.length; i++) {
      const ds = createAppDataSource({ ...options, migrations: classes.slice(0, i) });
      await ds.initialize();
      try {
        await runMigrations(ds, SCHEMA);
        after.push(await schemaSnapshot(ds, SCHEMA));
      } finally {
        await ds.destroy();
      }
    }
    expect(after[0]).toEqual(EMPTY);

    const ds = createAppDataSource(options);
    await ds.initialize();
    try {
      for (let i = classes.length; i > 0; i--) {
        expect(await revertMigrations(ds, SCHEMA, { count: 1 })).toEqual([names[i - 1]]);
        expect({ reverted: names[i - 1], schema: await schemaSnapshot(ds, SCHEMA) }).toEqual({
          reverted: names[i - 1],
          schema: after[i - 1],
        });
      }
      expect(await ds.query(`SELECT count(*)::int AS n FROM "${SCHEMA}".migrations`)).toEqual([
        { n: 0 },
      ]);
      await expect(revertMigrations(ds, SCHEMA, { count: 1 })).rejects.toThrow(
        'asked to revert 1, but 0 applied (newest first: none)',
      );

      expect(await runMigrations(ds, SCHEMA)).toEqual(names);
      expect(await schemaSnapshot(ds, SCHEMA)).toEqual(after[classes.length]);
      // All at once, as `revert --count N` does it, and once more up.
      expect(await revertMigrations(ds, SCHEMA, { count: names.length })).toEqual(
        [...names].reverse(),
      );
      expect(await schemaSnapshot(ds, SCHEMA)).toEqual(EMPTY);
      expect(await runMigrations(ds, SCHEMA)).toEqual(names);
      expect(await schemaSnapshot(ds, SCHEMA)).toEqual(after[classes.length]);
    } finally {
      await ds.destroy();
    }
  });
});

import { DataSource, type MixedList, type EntitySchema } from 'typeorm';
import { z } from 'zod';
import { initializeDataSource } from './pg-errors';

export interface AppDataSourceOptions {
  url: string;
  /** The app's own Postgres schema (ARCHITECTURE: an app reads and writes only its own). */
  schema: string;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  entities: MixedList<Function | string | EntitySchema>;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  migrations: MixedList<Function | string>;
  poolSize?: number;
  /**
   * Most ms a query waits for a pooled connection (or a new one to connect): pg's
   * `connectionTimeoutMillis`. Past it the query fails with pg-pool's "timeout exceeded when
   * trying to connect", which `isDatabaseUnreachable` reads as Postgres out of reach (503
   * `database_unavailable` at the REST edges), never a request left waiting for ever.
   */
  acquireTimeoutMs?: number;
  applicationName?: string;
}

/** `acquireTimeoutMs` unless an app sets it: a pool that stays full this long is stuck. */
export const DEFAULT_ACQUIRE_TIMEOUT_MS = 10_000;

/**
 * An app's pool settings, one schema for every app that reads them: `DATABASE_POOL_SIZE` (the
 * Postgres connections this process holds at most; requests, jobs and consumers share them) and
 * `DATABASE_ACQUIRE_TIMEOUT_MS` (the most a query waits for a pooled connection, then 503
 * `database_unavailable`; also the most an account's write waits for its account's earlier
 * writes, `AccountTurns`, ADR 0405).
 */
export function poolSettings(defaultPoolSize: number) {
  return {
    DATABASE_POOL_SIZE: z.coerce.number().int().min(2).max(200).default(defaultPoolSize),
    DATABASE_ACQUIRE_TIMEOUT_MS: z.coerce
      .number()
      .int()
      .min(100)
      .max(120_000)
      .default(DEFAULT_ACQUIRE_TIMEOUT_MS),
  };
}

/** One TypeORM data source per app. `synchronize` is never on: the schema comes from migrations. */
export function createAppDataSource(options: AppDataSourceOptions): DataSource {
  return new DataSource({
    type: 'postgres',
    url: options.url,
    schema: options.schema,
    entities: options.entities,
    migrations: options.migrations,
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    migrationsRun: false,
    logging: false,
    extra: {
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: options.acquireTimeoutMs ?? DEFAULT_ACQUIRE_TIMEOUT_MS,
      application_name: options.applicationName ?? options.schema,
    },
  });
}

/** Creates the app's schema when missing, then applies pending migrations in order. Idempotent. */
export async function runMigrations(dataSource: DataSource, schema: string): Promise<string[]> {
  const wasInitialized = dataSource.isInitialized;
  if (!wasInitialized) await initializeDataSource(dataSource);
  try {
    await dataSource.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    return applied.map((migration) => migration.name);
  } finally {
    if (!wasInitialized) await dataSource.destroy();
  }
}

/** Readiness: Postgres answers, the app's schema exists and no migration is pending. */
export async function checkSchemaReady(dataSource: DataSource, schema: string): Promise<void> {
  const rows: Array<{ exists: boolean }> = await dataSource.query(
    'SELECT EXISTS (SELECT 1 FROM information_schema.schemata WHERE schema_name = $1) AS exists',
    [schema],
  );
  if (!rows[0]?.exists) throw new Error(`schema ${schema} missing (run migrations)`);
  if (await dataSource.showMigrations()) throw new Error(`schema ${schema} has pending migrations`);
}

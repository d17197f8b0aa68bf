import { createAppDataSource, runMigrations } from '@meridian/platform-db';
import { createTestDatabase } from '@meridian/testing';
import type { DataSource } from 'typeorm';
import { AttemptsRepository } from '../attempts/attempts.repository';
import { dataSourceOptions, SCHEMA } from '../db/data-source';

export interface AttemptLogDatabase {
  /** The database's URL (a second pool: another worker process). */
  url: string;
  dataSource: DataSource;
  repo: AttemptsRepository;
  close(): Promise<void>;
}

/** A migrated database of its own for a spec of the attempt log, and the repository on it. */
export async function attemptLogDatabase(prefix: string): Promise<AttemptLogDatabase> {
  const db = await createTestDatabase({ prefix });
  await runMigrations(createAppDataSource(dataSourceOptions(db.url)), SCHEMA);
  const dataSource = createAppDataSource(dataSourceOptions(db.url));
  await dataSource.initialize();
  return {
    url: db.url,
    dataSource,
    repo: new AttemptsRepository(dataSource),
    close: async () => {
      await dataSource.destroy();
      await db.drop();
    },
  };
}

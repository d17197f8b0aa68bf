import { loadConfigOrExit, commonEnv } from '@meridian/platform-config';
import { z } from 'zod';
import type { AppDataSourceOptions } from './data-source';
import { createAppDataSource, runMigrations } from './data-source';

/**
 * Body of every app's `migrate.ts`: reads DATABASE_URL, applies the app's migrations to its own
 * schema, prints one line, exits non-zero on failure. Run by `npm run migrate` and the migration Job.
 */
export function runMigrateCommand(
  app: string,
  options: (url: string) => AppDataSourceOptions,
): void {
  const { DATABASE_URL } = loadConfigOrExit(z.object({ DATABASE_URL: commonEnv.DATABASE_URL }));
  const resolved = options(DATABASE_URL);
  runMigrations(createAppDataSource(resolved), resolved.schema).then(
    (applied) => {
      const list = applied.length ? `: ${applied.join(', ')}` : '';
      process.stdout.write(
        `${app}: schema ${resolved.schema}, ${applied.length} migration(s) applied${list}\n`,
      );
    },
    (error: unknown) => {
      process.stderr.write(
        `${app}: migration failed: ${error instanceof Error ? error.message : String(error)}\n`,
      );
      process.exit(1);
    },
  );
}

import { loadConfigOrExit, commonEnv } from '@meridian/platform-config';
import { quoteInput } from '@meridian/errors';
import { z } from 'zod';
import type { AppDataSourceOptions } from './data-source';
import { createAppDataSource, runMigrations } from './data-source';
import {
  parseRevertArguments,
  revertMigrations,
  RevertRefused,
  REVERT_USAGE,
  type RevertRequest,
} from './revert-migrations';

/**
 * Body of every app's `migrate.ts`: reads DATABASE_URL and, without arguments, applies the app's
 * migrations to its own schema, prints one line, exits non-zero on failure (`npm run migrate`,
 * the migration Job). `revert [--count N | --to <migration name>]` reverts the last applied ones
 * instead (deploy/README.md "Rollback"), a line per migration; a bad argument, or a request past
 * what is applied, exits 2 before anything is reverted.
 */
export function runMigrateCommand(
  app: string,
  options: (url: string) => AppDataSourceOptions,
  args: readonly string[] = process.argv.slice(2),
): void {
  const [command, ...rest] = args;
  if (command === undefined) return apply(app, options);
  if (command !== 'revert')
    return exitBad(
      app,
      `unknown command ${quoteInput(command)}; usage: migrate.ts [${REVERT_USAGE}]`,
    );
  let request: RevertRequest;
  try {
    request = parseRevertArguments(rest);
  } catch (error) {
    return exitBad(app, `revert refused: ${messageOf(error)}`);
  }
  revert(app, options, request);
}

function apply(app: string, options: (url: string) => AppDataSourceOptions): void {
  const resolved = options(databaseUrl());
  runMigrations(createAppDataSource(resolved), resolved.schema).then(
    (applied) => {
      const list = applied.length ? `: ${applied.join(', ')}` : '';
      process.stdout.write(
        `${app}: schema ${resolved.schema}, ${applied.length} migration(s) applied${list}\n`,
      );
    },
    (error: unknown) => {
      process.stderr.write(`${app}: migration failed: ${messageOf(error)}\n`);
      process.exit(1);
    },
  );
}

function revert(
  app: string,
  options: (url: string) => AppDataSourceOptions,
  request: RevertRequest,
): void {
  const resolved = options(databaseUrl());
  revertMigrations(createAppDataSource(resolved), resolved.schema, request, (name, transaction) =>
    process.stdout.write(
      `${app}: reverted ${name} (${transaction === 'none' ? 'without a transaction' : 'in its own transaction'})\n`,
    ),
  ).then(
    (reverted) => {
      const list = reverted.length ? `: ${reverted.join(', ')}` : '';
      process.stdout.write(
        `${app}: schema ${resolved.schema}, ${reverted.length} migration(s) reverted${list}\n`,
      );
    },
    (error: unknown) => {
      if (error instanceof RevertRefused) return exitBad(app, `revert refused: ${error.message}`);
      process.stderr.write(`${app}: revert failed: ${messageOf(error)}\n`);
      process.exit(1);
    },
  );
}

function databaseUrl(): string {
  return loadConfigOrExit(z.object({ DATABASE_URL: commonEnv.DATABASE_URL })).DATABASE_URL;
}

/** A bad argument, or a request the schema cannot honour: exit 2, as the image's entrypoint. */
function exitBad(app: string, message: string): void {
  process.stderr.write(`${app}: ${message}\n`);
  process.exit(2);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

import { quoteInput } from '@meridian/errors';
import { MigrationExecutor, type DataSource, type MigrationInterface } from 'typeorm';
import { initializeDataSource } from './pg-errors';

/** What `migrate.ts revert` is asked for: the last `count` applied, or every one applied after `to`. */
export type RevertRequest = { readonly count: number } | { readonly to: string };

/** How a migration's `down()` runs: in a transaction of its own, or none (`transaction = false`). */
export type RevertTransaction = 'each' | 'none';

/**
 * A revert refused for its arguments or for what is applied (exit 2). Thrown before anything is
 * reverted, or between two migrations when what is applied changed under the revert.
 */
export class RevertRefused extends Error {
  override name = 'RevertRefused';
}

export const REVERT_USAGE = 'revert [--count N | --to <migration name>] (default: --count 1)';

/** The arguments after `revert`: none (the last applied), `--count N` or `--to <name>`. */
export function parseRevertArguments(args: readonly string[]): RevertRequest {
  if (args.length === 0) return { count: 1 };
  const [flag, value = ''] = args;
  if (args.length !== 2 || (flag !== '--count' && flag !== '--to'))
    throw new RevertRefused(`bad arguments ${quoteInput(args.join(' '))}; usage: ${REVERT_USAGE}`);
  if (flag === '--count') {
    if (!/^[1-9][0-9]{0,3}$/.test(value))
      throw new RevertRefused(
        `--count takes a whole number from 1 to 9999, not ${quoteInput(value)}`,
      );
    return { count: Number(value) };
  }
  // A migration's class name (what the migrations table and `migrate` print).
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(value))
    throw new RevertRefused(`--to takes a migration's name, not ${quoteInput(value)}`);
  return { to: value };
}

/**
 * The migrations to revert, newest first, from those applied (newest first) and those this
 * image holds. Refuses rather than reverting fewer or more than asked: past what is applied, a
 * `--to` that is not applied, or a migration this image has no `down()` for.
 */
export function planRevert(
  applied: readonly string[],
  known: ReadonlySet<string>,
  request: RevertRequest,
): string[] {
  const newestFirst = applied.length ? applied.join(', ') : 'none';
  let plan: string[];
  if ('count' in request) {
    if (request.count > applied.length)
      throw new RevertRefused(
        `asked to revert ${request.count}, but ${applied.length} applied (newest first: ${newestFirst})`,
      );
    plan = applied.slice(0, request.count);
  } else {
    const at = applied.indexOf(request.to);
    if (at < 0)
      throw new RevertRefused(
        known.has(request.to)
          ? `${request.to} is not applied (applied, newest first: ${newestFirst})`
          : `this image has no migration ${quoteInput(request.to)} (applied, newest first: ${newestFirst})`,
      );
    plan = applied.slice(0, at);
  }
  const foreign = plan.find((name) => !known.has(name));
  if (foreign)
    throw new RevertRefused(
      `${foreign} was applied by another release: revert it with the image that holds it`,
    );
  return plan;
}

/**
 * Reverts the app's last applied migrations one by one, newest first, each `down()` in the
 * transaction mode its class asks for (`transaction = false`: none, else its own transaction).
 * TypeORM's `undoLastMigration` defaults to a transaction whatever the class says, where
 * `DROP INDEX CONCURRENTLY` cannot run. A session advisory lock keeps two reverts of one schema
 * apart, and before each step the last applied migration must be the one planned, so nothing
 * beyond the request is reverted. Returns the names reverted.
 */
export async function revertMigrations(
  dataSource: DataSource,
  schema: string,
  request: RevertRequest,
  onReverted: (name: string, transaction: RevertTransaction) => void = () => undefined,
): Promise<string[]> {
  const wasInitialized = dataSource.isInitialized;
  if (!wasInitialized) await initializeDataSource(dataSource);
  const runner = dataSource.createQueryRunner();
  const lockKey = `meridian migrations revert ${schema}`;
  let locked = false;
  try {
    const rows: Array<{ locked: boolean }> = await runner.query(
      'SELECT pg_try_advisory_lock(hashtext($1)) AS locked',
      [lockKey],
    );
    locked = rows[0]?.locked === true;
    if (!locked) throw new RevertRefused(`another revert of schema ${schema} is running`);
    const executor = new MigrationExecutor(dataSource, runner);
    const applied = async () => (await executor.getExecutedMigrations()).map((m) => m.name);
    const instances = new Map<string, MigrationInterface>(
      dataSource.migrations.map((m) => [m.name ?? m.constructor.name, m]),
    );
    const plan = planRevert(await applied(), new Set(instances.keys()), request);
    const reverted: string[] = [];
    for (const name of plan) {
      const [last] = await applied();
      if (last !== name)
        throw new RevertRefused(
          `stopped before ${name}: the last applied migration is now ${last ?? 'none'} ` +
            `(did migrations run meanwhile?); reverted: ${reverted.join(', ') || 'none'}`,
        );
      const transaction: RevertTransaction =
        instances.get(name)?.transaction === false ? 'none' : 'each';
      executor.transaction = transaction;
      await executor.undoLastMigration();
      reverted.push(name);
      onReverted(name, transaction);
    }
    return reverted;
  } finally {
    if (locked)
      await runner.query('SELECT pg_advisory_unlock(hashtext($1))', [lockKey]).catch(() => {});
    await runner.release();
    if (!wasInitialized) await dataSource.destroy();
  }
}

import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { Queryable } from './users.repository';

/**
 * Failed sign-ins by key (`signInThrottleKeys`: the pair, the email, the address), the (email,
 * address) pairs signed in from (`known:…`, one row each, kept `LOGIN_KNOWN_ADDRESS_MS`) and
 * sign-up attempts (`signUpThrottleKeys`), each kept for its window.
 */
@Injectable()
export class LoginFailuresRepository {
  constructor(private readonly db: DataSource) {}

  /**
   * Runs `work` in one transaction holding a lock on each of `keys` (transaction-scoped advisory
   * locks, taken in one order): a throttle's count of a key's rows and the row it records for
   * the attempt are one step, so attempts racing are counted one after the other and none is
   * let through past the limit (QA H2: a parallel burst each read the count before any
   * recorded). Its queries, given `db`, commit with it; `work` takes no other connection.
   */
  async withKeysLocked<T>(
    keys: readonly string[],
    work: (db: Queryable) => Promise<T>,
  ): Promise<T> {
    return this.db.transaction(async (manager) => {
      for (const key of [...new Set(keys)].sort())
        await manager.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [key]);
      return work(manager);
    });
  }

  async recent(key: string, since: Date, db: Queryable = this.db): Promise<Date[]> {
    const rows = (await db.query(
      'SELECT at FROM dashboard.login_failures WHERE key = $1 AND at > $2 ORDER BY at',
      [key, since],
    )) as Array<{ at: Date }>;
    return rows.map((row) => row.at);
  }

  /** A row at `at` for each of `keys`; each key's rows at or before `forgetBefore` go. */
  async record(
    keys: readonly string[],
    at: Date,
    forgetBefore: Date,
    db: Queryable = this.db,
  ): Promise<void> {
    await db.query('INSERT INTO dashboard.login_failures (key, at) SELECT unnest($1::text[]), $2', [
      keys,
      at,
    ]);
    await db.query('DELETE FROM dashboard.login_failures WHERE key = ANY($1) AND at <= $2', [
      keys,
      forgetBefore,
    ]);
  }

  /** Whether `key` has a row in the window (after `since`). */
  async seen(key: string, since: Date, db: Queryable = this.db): Promise<boolean> {
    const rows = (await db.query(
      'SELECT 1 FROM dashboard.login_failures WHERE key = $1 AND at > $2 LIMIT 1',
      [key, since],
    )) as unknown[];
    return rows.length > 0;
  }

  /**
   * Takes back what `record` wrote for one attempt: one row at `at` of each of `keys` (rows of
   * one key and time are alike, whichever goes).
   */
  async unrecord(keys: readonly string[], at: Date): Promise<void> {
    await this.db.query(
      `DELETE FROM dashboard.login_failures WHERE ctid IN (
         SELECT DISTINCT ON (key) ctid FROM dashboard.login_failures
          WHERE key = ANY($1::text[]) AND at = $2)`,
      [keys, at],
    );
  }

  async clear(key: string): Promise<void> {
    await this.db.query('DELETE FROM dashboard.login_failures WHERE key = $1', [key]);
  }

  /** `key` holds one row, at `at` (a known pair's latest sign-in). */
  async remember(key: string, at: Date): Promise<void> {
    await this.db.transaction(async (manager) => {
      await manager.query('DELETE FROM dashboard.login_failures WHERE key = $1', [key]);
      await manager.query('INSERT INTO dashboard.login_failures (key, at) VALUES ($1, $2)', [
        key,
        at,
      ]);
    });
  }

  /**
   * The operator's unlock: the sign-in failures of an email (its own and every pair of it) and/or
   * of a client address (its own and every pair from it); known pairs and sign-ups stay.
   */
  async clearSignIn(target: { email?: string; address?: string }): Promise<number> {
    const email = target.email === undefined ? null : `email:${target.email}`;
    const address = target.address === undefined ? null : target.address;
    const [row] = (await this.db.query(
      `WITH gone AS (
         DELETE FROM dashboard.login_failures
          WHERE ($1::text IS NOT NULL AND (key = $1 OR starts_with(key, $1 || ':ip:')))
             OR ($2::text IS NOT NULL AND (key = 'ip:' || $2
                  OR (starts_with(key, 'email:') AND right(key, length($2) + 4) = ':ip:' || $2)))
          RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [email, address],
    )) as { n: number }[];
    return row!.n;
  }
}

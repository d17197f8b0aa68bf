import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/**
 * Failed sign-ins by key (`signInThrottleKeys`: the pair, the email, the address), the (email,
 * address) pairs signed in from (`known:…`, one row each, kept `LOGIN_KNOWN_ADDRESS_MS`) and
 * sign-up attempts (`signUpThrottleKeys`), each kept for its window.
 */
@Injectable()
export class LoginFailuresRepository {
  constructor(private readonly db: DataSource) {}

  async recent(key: string, since: Date): Promise<Date[]> {
    const rows = (await this.db.query(
      'SELECT at FROM dashboard.login_failures WHERE key = $1 AND at > $2 ORDER BY at',
      [key, since],
    )) as Array<{ at: Date }>;
    return rows.map((row) => row.at);
  }

  async record(keys: string[], at: Date, forgetBefore: Date): Promise<void> {
    await this.db.query(
      'INSERT INTO dashboard.login_failures (key, at) SELECT unnest($1::text[]), $2',
      [keys, at],
    );
    await this.db.query('DELETE FROM dashboard.login_failures WHERE key = ANY($1) AND at <= $2', [
      keys,
      forgetBefore,
    ]);
  }

  /** Whether `key` has a row in the window (after `since`). */
  async seen(key: string, since: Date): Promise<boolean> {
    const rows = (await this.db.query(
      'SELECT 1 FROM dashboard.login_failures WHERE key = $1 AND at > $2 LIMIT 1',
      [key, since],
    )) as unknown[];
    return rows.length > 0;
  }

  /**
   * Records `key` once per `attempt` in the window: a row for each unless `attempt` has one after
   * `forgetBefore` (then nothing, and false). Attempts racing (a double submit) are taken one
   * after the other (a transaction-scoped advisory lock on `attempt`), so one of them counts.
   */
  async recordOnce(key: string, attempt: string, at: Date, forgetBefore: Date): Promise<boolean> {
    return this.db.transaction(async (manager) => {
      await manager.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [attempt]);
      await manager.query('DELETE FROM dashboard.login_failures WHERE key = ANY($1) AND at <= $2', [
        [key, attempt],
        forgetBefore,
      ]);
      const inserted = (await manager.query(
        `INSERT INTO dashboard.login_failures (key, at)
         SELECT unnest($1::text[]), $2
          WHERE NOT EXISTS (SELECT 1 FROM dashboard.login_failures WHERE key = $3)
         RETURNING key`,
        [[key, attempt], at, attempt],
      )) as unknown[];
      return inserted.length > 0;
    });
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

import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/**
 * Failed sign-ins by key (`email:<lower email>`, `ip:<address>`) and sign-up attempts
 * (`signUpThrottleKeys`), kept for one window.
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
}

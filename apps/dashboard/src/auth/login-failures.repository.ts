import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** Failed sign-ins by key (`email:<lower email>`, `ip:<address>`), kept for one window. */
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

  async clear(key: string): Promise<void> {
    await this.db.query('DELETE FROM dashboard.login_failures WHERE key = $1', [key]);
  }
}

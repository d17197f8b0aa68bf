import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

@Injectable()
export class SettingsRepository {
  constructor(private readonly db: DataSource) {}

  async get(key: string): Promise<string | undefined> {
    const rows = (await this.db.query('SELECT value FROM dashboard.settings WHERE key = $1', [
      key,
    ])) as Array<{ value: string }>;
    return rows[0]?.value;
  }

  async set(key: string, value: string, at: Date): Promise<void> {
    await this.db.query(
      `INSERT INTO dashboard.settings (key, value, updated_at) VALUES ($1, $2, $3)
       ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at`,
      [key, value, at],
    );
  }
}

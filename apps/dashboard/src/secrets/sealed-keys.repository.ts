import type { StaleRowsQuery } from '@meridian/platform-secrets';
import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';

/** A user's sealed API key, as the reseal pass reads it. */
export interface SealedKeyRow {
  id: string;
  sealed_api_key: string;
}

/** The key id a sealed value names, `none` for a value sealed before the ring (`v1`). */
const KEY_ID_OF = `CASE WHEN split_part(sealed_api_key, '.', 1) = 'v2'
                        THEN split_part(sealed_api_key, '.', 2) ELSE 'none' END`;

/** SQL over `dashboard.users.sealed_api_key` for a DASHBOARD_SECRETS_KEY rotation (ADR 0603). */
@Injectable()
export class SealedKeysRepository {
  constructor(private readonly db: DataSource) {}

  /**
   * Users whose key is not sealed under the current key (`$1`: its `v2.<key id>.` prefix), as
   * the reseal passes lock them (`resealPasses`).
   */
  readonly staleRows: StaleRowsQuery = {
    table: 'dashboard.users',
    columns: 'id, sealed_api_key',
    stale: 'sealed_api_key IS NOT NULL AND NOT starts_with(sealed_api_key, $1)',
  };

  async store(m: EntityManager, id: string, sealed: string): Promise<void> {
    await m.query('UPDATE dashboard.users SET sealed_api_key = $2 WHERE id = $1', [id, sealed]);
  }

  /** How many sealed API keys each key id holds (`none`: sealed before the ring). */
  async countByKey(): Promise<Map<string, number>> {
    const rows = (await this.db.query(
      `SELECT ${KEY_ID_OF} AS key_id, count(*) AS n FROM dashboard.users
        WHERE sealed_api_key IS NOT NULL GROUP BY 1`,
    )) as Array<{ key_id: string; n: string }>;
    return new Map(rows.map((row) => [row.key_id, Number(row.n)]));
  }
}

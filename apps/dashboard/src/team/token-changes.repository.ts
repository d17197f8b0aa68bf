import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { Queryable } from '../auth/users.repository';

export type TokenChange = 'created' | 'rolled';

export interface TokenChangeRow {
  tokenId: string;
  change: TokenChange;
  at: Date;
}

/** Who made or rolled an access token through the dashboard (ADR 0604 amendment). */
@Injectable()
export class TokenChangesRepository {
  constructor(private readonly db: DataSource) {}

  /** A token id is made once (a roll makes a new id): a repeat changes nothing. */
  async record(
    accountId: string,
    userId: string,
    tokenId: string,
    change: TokenChange,
    at: Date,
  ): Promise<void> {
    await this.db.query(
      `INSERT INTO dashboard.access_token_changes (token_id, account_id, user_id, change, at)
       VALUES ($1, $2, $3, $4, $5) ON CONFLICT (token_id) DO NOTHING`,
      [tokenId, accountId, userId, change, at],
    );
  }

  /** The user's changes since `since`, newest first. */
  async ofUserSince(db: Queryable, userId: string, since: Date): Promise<TokenChangeRow[]> {
    const rows = (await db.query(
      `SELECT token_id, change, at FROM dashboard.access_token_changes
        WHERE user_id = $1 AND at >= $2 ORDER BY at DESC`,
      [userId, since],
    )) as Array<{ token_id: string; change: TokenChange; at: Date }>;
    return rows.map((row) => ({ tokenId: row.token_id, change: row.change, at: row.at }));
  }
}

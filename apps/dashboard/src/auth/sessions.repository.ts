import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

export interface SessionRow {
  idHash: string;
  userId: string;
  csrfToken: string;
  lastSeenAt: Date;
  expiresAt: Date;
}

@Injectable()
export class SessionsRepository {
  constructor(private readonly db: DataSource) {}

  async insert(row: SessionRow, createdAt: Date): Promise<void> {
    await this.db.query(
      `INSERT INTO dashboard.sessions (id_hash, user_id, csrf_token, created_at, last_seen_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [row.idHash, row.userId, row.csrfToken, createdAt, row.lastSeenAt, row.expiresAt],
    );
  }

  async byHash(idHash: string): Promise<SessionRow | undefined> {
    const rows = (await this.db.query(
      `SELECT id_hash, user_id, csrf_token, last_seen_at, expires_at FROM dashboard.sessions WHERE id_hash = $1`,
      [idHash],
    )) as Array<{
      id_hash: string;
      user_id: string;
      csrf_token: string;
      last_seen_at: Date;
      expires_at: Date;
    }>;
    const raw = rows[0];
    return (
      raw && {
        idHash: raw.id_hash,
        userId: raw.user_id,
        csrfToken: raw.csrf_token,
        lastSeenAt: raw.last_seen_at,
        expiresAt: raw.expires_at,
      }
    );
  }

  async touch(idHash: string, at: Date): Promise<void> {
    await this.db.query('UPDATE dashboard.sessions SET last_seen_at = $2 WHERE id_hash = $1', [
      idHash,
      at,
    ]);
  }

  async delete(idHash: string): Promise<void> {
    await this.db.query('DELETE FROM dashboard.sessions WHERE id_hash = $1', [idHash]);
  }

  /** Ends every session of a user but one (after a password change). */
  async deleteOthers(userId: string, keepHash: string): Promise<void> {
    await this.db.query('DELETE FROM dashboard.sessions WHERE user_id = $1 AND id_hash <> $2', [
      userId,
      keepHash,
    ]);
  }

  /**
   * Deletes up to `limit` sessions that ended by `now`: past their `expires_at`, or idle since
   * `idleSince` or earlier (the ends `AuthService.current` applies, the same bounds); a
   * `RetentionPruner` batch (`SessionsRetention`). The count deleted.
   */
  async deleteExpired(now: Date, idleSince: Date, limit: number): Promise<number> {
    const [row]: Array<{ n: number }> = await this.db.query(
      `WITH deleted AS (
         DELETE FROM dashboard.sessions WHERE id_hash IN (
           SELECT id_hash FROM dashboard.sessions
            WHERE expires_at <= $1 OR last_seen_at <= $2
            LIMIT $3)
         RETURNING 1)
       SELECT count(*)::int AS n FROM deleted`,
      [now, idleSince, limit],
    );
    return row?.n ?? 0;
  }
}

import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

@Injectable()
export class InvitationsRepository {
  constructor(private readonly db: DataSource) {}

  async insert(codeHash: string, email: string, by: string, at: Date, expiresAt: Date) {
    await this.db.query(
      `INSERT INTO dashboard.invitations (code_hash, email, created_by, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5)`,
      [codeHash, email, by, at, expiresAt],
    );
  }

  /** An invitation as it stands, or undefined for a code never issued. */
  async byHash(
    codeHash: string,
  ): Promise<{ email: string; usedAt: Date | null; expiresAt: Date } | undefined> {
    const rows = (await this.db.query(
      'SELECT email, used_at, expires_at FROM dashboard.invitations WHERE code_hash = $1',
      [codeHash],
    )) as Array<{ email: string; used_at: Date | null; expires_at: Date }>;
    const row = rows[0];
    return row && { email: row.email, usedAt: row.used_at, expiresAt: row.expires_at };
  }

  /** Marks the invitation used if it is valid for this email; false otherwise (one statement, so it is used once). */
  async consume(codeHash: string, email: string, at: Date): Promise<boolean> {
    // TypeORM answers an UPDATE … RETURNING as [rows, affected count].
    const [rows] = (await this.db.query(
      `UPDATE dashboard.invitations SET used_at = $3
        WHERE code_hash = $1 AND lower(email) = lower($2) AND used_at IS NULL AND expires_at > $3
        RETURNING code_hash`,
      [codeHash, email, at],
    )) as [unknown[], number];
    return rows.length === 1;
  }

  async release(codeHash: string): Promise<void> {
    await this.db.query('UPDATE dashboard.invitations SET used_at = NULL WHERE code_hash = $1', [
      codeHash,
    ]);
  }
}

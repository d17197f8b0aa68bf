import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { AccountRole, Queryable } from '../auth/users.repository';

/** What a team invitation adds to a sign-up invitation: the account to join, as what. */
export interface TeamInvite {
  accountId: string;
  accountRole: AccountRole;
}

/** Why an invitation nobody used can no longer be used (migration 1764500000000). */
export type VoidReason = 'email_has_user' | 'superseded' | 'expired';

export interface InvitationRow {
  email: string;
  usedAt: Date | null;
  /** Set aside unused: its email got a user, or a newer invitation replaced it. */
  voided?: VoidReason;
  expiresAt: Date;
  /** A team invitation's account and role (ADR 0604); undefined for the operator's. */
  team?: TeamInvite;
}

/** A team invitation as the Team page lists it (pending only). */
export interface PendingTeamInvitation {
  id: string;
  email: string;
  accountRole: AccountRole;
  createdAt: Date;
  expiresAt: Date;
}

interface Raw {
  email: string;
  used_at: Date | null;
  void_reason?: VoidReason | null;
  expires_at: Date;
  account_id: string | null;
  account_role: AccountRole | null;
}

interface PendingRaw {
  id: string;
  email: string;
  account_role: AccountRole;
  created_at: Date;
  expires_at: Date;
}

const pendingOf = (row: PendingRaw): PendingTeamInvitation => ({
  id: row.id,
  email: row.email,
  accountRole: row.account_role,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
});

const rowOf = (raw: Raw): InvitationRow => ({
  email: raw.email,
  usedAt: raw.used_at,
  ...(raw.void_reason ? { voided: raw.void_reason } : {}),
  expiresAt: raw.expires_at,
  ...(raw.account_id && raw.account_role
    ? { team: { accountId: raw.account_id, accountRole: raw.account_role } }
    : {}),
});

@Injectable()
export class InvitationsRepository {
  constructor(private readonly db: DataSource) {}

  /**
   * `team`: a team invitation, with the id its owner revokes it by. False when that account
   * already has a pending invitation for this email (the unique partial index
   * `invitations_one_pending`: of invitations sent at once, one is made). An expired one of the
   * same email is set aside first (voided `expired`), as the index cannot read the clock.
   */
  async insert(
    codeHash: string,
    email: string,
    by: string,
    at: Date,
    expiresAt: Date,
    team?: TeamInvite & { id: string },
  ): Promise<boolean> {
    if (team)
      await this.db.query(
        `UPDATE dashboard.invitations SET voided_at = $3, void_reason = 'expired'
          WHERE account_id = $1 AND lower(email) = lower($2) AND used_at IS NULL
            AND voided_at IS NULL AND expires_at <= $3`,
        [team.accountId, email, at],
      );
    const rows = (await this.db.query(
      `INSERT INTO dashboard.invitations
         (code_hash, email, created_by, created_at, expires_at, id, account_id, account_role)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (account_id, lower(email))
         WHERE account_id IS NOT NULL AND used_at IS NULL AND voided_at IS NULL
         DO NOTHING
       RETURNING code_hash`,
      [
        codeHash,
        email,
        by,
        at,
        expiresAt,
        team?.id ?? null,
        team?.accountId ?? null,
        team?.accountRole ?? null,
      ],
    )) as unknown[];
    return rows.length === 1;
  }

  /** The account's pending team invitation for an email (usable or expired), if any. */
  async pendingFor(accountId: string, email: string): Promise<PendingTeamInvitation | undefined> {
    const rows = (await this.db.query(
      `SELECT id, email, account_role, created_at, expires_at FROM dashboard.invitations
        WHERE account_id = $1 AND lower(email) = lower($2) AND used_at IS NULL
          AND voided_at IS NULL`,
      [accountId, email],
    )) as PendingRaw[];
    return rows[0] && pendingOf(rows[0]);
  }

  /** An invitation as it stands, or undefined for a code never issued. */
  async byHash(codeHash: string): Promise<InvitationRow | undefined> {
    const rows = (await this.db.query(
      `SELECT email, used_at, void_reason, expires_at, account_id, account_role
         FROM dashboard.invitations WHERE code_hash = $1`,
      [codeHash],
    )) as Raw[];
    return rows[0] && rowOf(rows[0]);
  }

  /**
   * Marks the invitation used if it is valid for this email (one statement, so it is used once):
   * the invitation as it was, or undefined when it is not valid.
   */
  async consume(codeHash: string, email: string, at: Date): Promise<InvitationRow | undefined> {
    // TypeORM answers an UPDATE … RETURNING as [rows, affected count].
    const [rows] = (await this.db.query(
      `UPDATE dashboard.invitations SET used_at = $3
        WHERE code_hash = $1 AND lower(email) = lower($2) AND used_at IS NULL
          AND voided_at IS NULL AND expires_at > $3
        RETURNING email, used_at, expires_at, account_id, account_role`,
      [codeHash, email, at],
    )) as [Raw[], number];
    return rows[0] && rowOf(rows[0]);
  }

  async release(codeHash: string): Promise<void> {
    await this.db.query('UPDATE dashboard.invitations SET used_at = NULL WHERE code_hash = $1', [
      codeHash,
    ]);
  }

  /** The account's team invitations not used and not expired, newest first. */
  async pendingOfAccount(accountId: string, now: Date): Promise<PendingTeamInvitation[]> {
    const rows = (await this.db.query(
      `SELECT id, email, account_role, created_at, expires_at FROM dashboard.invitations
        WHERE account_id = $1 AND used_at IS NULL AND voided_at IS NULL AND expires_at > $2
        ORDER BY created_at DESC, email`,
      [accountId, now],
    )) as PendingRaw[];
    return rows.map(pendingOf);
  }

  /** Deletes the account's unused team invitation; false when it has none with this id. */
  async revokeOfAccount(accountId: string, id: string, db: Queryable = this.db): Promise<boolean> {
    const [rows] = (await db.query(
      `DELETE FROM dashboard.invitations
        WHERE id = $1 AND account_id = $2 AND used_at IS NULL AND voided_at IS NULL
        RETURNING id`,
      [id, accountId],
    )) as [unknown[], number];
    return rows.length === 1;
  }
}

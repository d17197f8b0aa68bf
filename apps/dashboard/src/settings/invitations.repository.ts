import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { AccountRole } from '../auth/users.repository';

/** What a team invitation adds to a sign-up invitation: the account to join, as what. */
export interface TeamInvite {
  accountId: string;
  accountRole: AccountRole;
}

/**
 * Why an invitation nobody used can no longer be used (migrations 1764500000000, 1764600000000:
 * `revoked` by the operator, or by a team's owner).
 */
export type VoidReason = 'email_has_user' | 'superseded' | 'expired' | 'revoked';

export interface InvitationRow {
  email: string;
  usedAt: Date | null;
  /** Set aside unused: its email got a user, a newer invitation replaced it, or revoked. */
  voided?: VoidReason;
  expiresAt: Date;
  /** A team invitation's account and role (ADR 0604); undefined for the operator's. */
  team?: TeamInvite;
}

/** An operator's sign-up invitation as the operator's list shows it (pending only). */
export interface PendingSignUpInvitation {
  id: string;
  email: string;
  createdAt: Date;
  expiresAt: Date;
  /** Who made it: the operator user's id, and its email while that user exists. */
  createdBy: { id: string; email: string | null };
}

/** Where a revoke found the invitation when it revoked nothing. */
export type NotRevoked = 'unknown' | 'revoked' | 'used' | 'void';

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
   * `id`: what the list names it by and a revoke takes; `team`: a team invitation (the operator's
   * sign-up invitations have none). False when that account (for the operator's: sign-up)
   * already has a pending invitation for this email (the unique partial index
   * `invitations_one_pending`, `NULLS NOT DISTINCT` over the account: of invitations sent at
   * once, one is made). An expired one of the same scope and email is set aside first (voided
   * `expired`), as the index cannot read the clock.
   */
  async insert(
    codeHash: string,
    email: string,
    by: string,
    at: Date,
    expiresAt: Date,
    id: string,
    team?: TeamInvite,
  ): Promise<boolean> {
    await this.db.query(
      `UPDATE dashboard.invitations SET voided_at = $3, void_reason = 'expired'
        WHERE account_id IS NOT DISTINCT FROM $1 AND lower(email) = lower($2)
          AND used_at IS NULL AND voided_at IS NULL AND expires_at <= $3`,
      [team?.accountId ?? null, email, at],
    );
    const rows = (await this.db.query(
      `INSERT INTO dashboard.invitations
         (code_hash, email, created_by, created_at, expires_at, id, account_id, account_role)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (account_id, lower(email)) WHERE used_at IS NULL AND voided_at IS NULL
         DO NOTHING
       RETURNING code_hash`,
      [codeHash, email, by, at, expiresAt, id, team?.accountId ?? null, team?.accountRole ?? null],
    )) as unknown[];
    return rows.length === 1;
  }

  /**
   * The pending invitation for an email (usable or expired) of an account, or of the operator's
   * sign-up invitations (`null`), if any: the one `insert` conflicted with.
   */
  async pendingFor(
    accountId: string | null,
    email: string,
  ): Promise<{ id: string; expiresAt: Date } | undefined> {
    const rows = (await this.db.query(
      `SELECT id, expires_at FROM dashboard.invitations
        WHERE account_id IS NOT DISTINCT FROM $1 AND lower(email) = lower($2)
          AND used_at IS NULL AND voided_at IS NULL`,
      [accountId, email],
    )) as Array<{ id: string; expires_at: Date }>;
    return rows[0] && { id: rows[0].id, expiresAt: rows[0].expires_at };
  }

  /** The operator's sign-up invitations not used, set aside nor expired, newest first. */
  async pendingSignUps(now: Date): Promise<PendingSignUpInvitation[]> {
    const rows = (await this.db.query(
      `SELECT i.id, i.email, i.created_at, i.expires_at, i.created_by, u.email AS created_by_email
         FROM dashboard.invitations i LEFT JOIN dashboard.users u ON u.id = i.created_by
        WHERE i.account_id IS NULL AND i.used_at IS NULL AND i.voided_at IS NULL
          AND i.expires_at > $1
        ORDER BY i.created_at DESC, i.email`,
      [now],
    )) as Array<{
      id: string;
      email: string;
      created_at: Date;
      expires_at: Date;
      created_by: string;
      created_by_email: string | null;
    }>;
    return rows.map((row) => ({
      id: row.id,
      email: row.email,
      createdAt: row.created_at,
      expiresAt: row.expires_at,
      createdBy: { id: row.created_by, email: row.created_by_email },
    }));
  }

  /**
   * Sets aside (`revoked`) the unused invitation with this id of an account's team, or of the
   * operator's sign-up invitations (`accountId` null), kept so that its link says it was revoked
   * (one rule for both kinds: `invitation-revoke.ts`). Revoked: true; else where it stands
   * (`NotRevoked`; `unknown` for an id of another scope too).
   */
  async revoke(accountId: string | null, id: string, at: Date): Promise<true | NotRevoked> {
    const [rows] = (await this.db.query(
      `UPDATE dashboard.invitations SET voided_at = $3, void_reason = 'revoked'
        WHERE id = $1 AND account_id IS NOT DISTINCT FROM $2
          AND used_at IS NULL AND voided_at IS NULL
        RETURNING id`,
      [id, accountId, at],
    )) as [unknown[], number];
    if (rows.length === 1) return true;
    const found = (await this.db.query(
      `SELECT used_at, void_reason FROM dashboard.invitations
        WHERE id = $1 AND account_id IS NOT DISTINCT FROM $2`,
      [id, accountId],
    )) as Array<{ used_at: Date | null; void_reason: VoidReason | null }>;
    const row = found[0];
    if (!row) return 'unknown';
    if (row.used_at) return 'used';
    return row.void_reason === 'revoked' ? 'revoked' : 'void';
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
}

import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';

export type Role = 'customer' | 'operator';

/** A customer's place in their billing account (ADR 0604); null for the operator. */
export type AccountRole = 'owner' | 'member';

export interface UserRow {
  id: string;
  email: string;
  passwordHash: string;
  role: Role;
  accountId: string | null;
  accountRole: AccountRole | null;
  apiKeyId: string | null;
  sealedApiKey: string | null;
  createdAt: Date;
}

interface Raw {
  id: string;
  email: string;
  password_hash: string;
  role: Role;
  account_id: string | null;
  account_role: AccountRole | null;
  api_key_id: string | null;
  sealed_api_key: string | null;
  created_at: Date;
}

const rowOf = (raw: Raw): UserRow => ({
  id: raw.id,
  email: raw.email,
  passwordHash: raw.password_hash,
  role: raw.role,
  accountId: raw.account_id,
  accountRole: raw.account_role,
  apiKeyId: raw.api_key_id,
  sealedApiKey: raw.sealed_api_key,
  createdAt: raw.created_at,
});

/** Where a query runs: the pool or one connection's transaction. */
export type Queryable = Pick<DataSource | EntityManager, 'query'>;

const COLUMNS =
  'id, email, password_hash, role, account_id, account_role, api_key_id, sealed_api_key, created_at';

@Injectable()
export class UsersRepository {
  constructor(private readonly db: DataSource) {}

  /** `db`: the pool, or the sign-up's claim (`withEmailClaimed`). */
  async byEmail(email: string, db: Queryable = this.db): Promise<UserRow | undefined> {
    const rows = (await db.query(
      `SELECT ${COLUMNS} FROM dashboard.users WHERE lower(email) = lower($1)`,
      [email],
    )) as Raw[];
    return rows[0] && rowOf(rows[0]);
  }

  async byId(id: string): Promise<UserRow | undefined> {
    const rows = (await this.db.query(`SELECT ${COLUMNS} FROM dashboard.users WHERE id = $1`, [
      id,
    ])) as Raw[];
    return rows[0] && rowOf(rows[0]);
  }

  async byAccount(accountId: string): Promise<UserRow | undefined> {
    const rows = (await this.db.query(
      `SELECT ${COLUMNS} FROM dashboard.users WHERE account_id = $1 ORDER BY created_at LIMIT 1`,
      [accountId],
    )) as Raw[];
    return rows[0] && rowOf(rows[0]);
  }

  /** The account's dashboard users and the key the dashboard holds for each now. */
  async keyHoldersOf(accountId: string): Promise<Array<{ email: string; apiKeyId: string }>> {
    const rows = (await this.db.query(
      `SELECT email, api_key_id FROM dashboard.users
        WHERE account_id = $1 AND api_key_id IS NOT NULL ORDER BY created_at`,
      [accountId],
    )) as Array<{ email: string; api_key_id: string }>;
    return rows.map((row) => ({ email: row.email, apiKeyId: row.api_key_id }));
  }

  /** The sign-up email of each of these accounts that has a dashboard user. */
  async emailsOfAccounts(accountIds: readonly string[]): Promise<Map<string, string>> {
    if (accountIds.length === 0) return new Map();
    const rows = (await this.db.query(
      `SELECT DISTINCT ON (account_id) account_id, email FROM dashboard.users
        WHERE account_id = ANY($1::text[]) ORDER BY account_id, created_at`,
      [accountIds],
    )) as Array<{ account_id: string; email: string }>;
    return new Map(rows.map((row) => [row.account_id, row.email]));
  }

  /** Customers whose email or account id contains `query` (case-insensitive), newest first. */
  async searchCustomers(query: string, limit: number): Promise<UserRow[]> {
    const pattern = `%${query.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const rows = (await this.db.query(
      `SELECT ${COLUMNS} FROM dashboard.users
        WHERE role = 'customer' AND (email ILIKE $1 OR account_id ILIKE $1)
        ORDER BY created_at DESC LIMIT $2`,
      [pattern, limit],
    )) as Raw[];
    return rows.map(rowOf);
  }

  /**
   * Runs `work` holding the sign-up claim of `email` (case-insensitive), on one connection: the
   * claim is a transaction-scoped advisory lock, released when `work` ends (its queries, given
   * the claim's connection, commit then). Undefined, at once, when another sign-up of the email
   * holds it: racing sign-ups make one billing account, not one each (QA). Never waits, so
   * racers hold no pool connection; the holder holds one for the billing call.
   */
  async withEmailClaimed<T>(
    email: string,
    work: (db: Queryable) => Promise<T>,
  ): Promise<T | undefined> {
    return this.db.transaction(async (manager) => {
      const [row] = (await manager.query(
        `SELECT pg_try_advisory_xact_lock(hashtextextended('dashboard.sign-up:' || lower($1), 0)) AS claimed`,
        [email],
      )) as Array<{ claimed: boolean }>;
      return row?.claimed ? work(manager) : undefined;
    });
  }

  /**
   * Runs `work` holding the user's row lock (`FOR UPDATE`, one connection): one renewal of the
   * account's key at a time across replicas; a racer waits, then reads the key the holder stored
   * (`row`: the user as locked, undefined when gone). Its queries, given `db`, commit with it.
   */
  async withUserLocked<T>(
    id: string,
    work: (db: Queryable, row: UserRow | undefined) => Promise<T>,
  ): Promise<T> {
    return this.db.transaction(async (manager) => {
      const rows = (await manager.query(
        `SELECT ${COLUMNS} FROM dashboard.users WHERE id = $1 FOR UPDATE`,
        [id],
      )) as Raw[];
      return work(manager, rows[0] && rowOf(rows[0]));
    });
  }

  /** The account's key the dashboard signs the user's calls with: its billing id, sealed. */
  async setApiKey(db: Queryable, id: string, apiKeyId: string, sealed: string): Promise<void> {
    await db.query(
      'UPDATE dashboard.users SET api_key_id = $2, sealed_api_key = $3 WHERE id = $1',
      [id, apiKeyId, sealed],
    );
  }

  /** A page of customers' billing key ids, by user id after `after` (null: from the first). */
  async customerKeyIds(
    after: string | null,
    limit: number,
  ): Promise<Array<{ id: string; apiKeyId: string }>> {
    const rows = (await this.db.query(
      `SELECT id, api_key_id FROM dashboard.users
        WHERE role = 'customer' AND api_key_id IS NOT NULL AND ($1::text IS NULL OR id > $1)
        ORDER BY id LIMIT $2`,
      [after, limit],
    )) as Array<{ id: string; api_key_id: string }>;
    return rows.map((row) => ({ id: row.id, apiKeyId: row.api_key_id }));
  }

  /** Inserts unless the email is taken; false when it was. */
  async insert(user: UserRow, db: Queryable = this.db): Promise<boolean> {
    const rows = (await db.query(
      `INSERT INTO dashboard.users (${COLUMNS}, password_changed_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)
       ON CONFLICT DO NOTHING RETURNING id`,
      [
        user.id,
        user.email,
        user.passwordHash,
        user.role,
        user.accountId,
        user.accountRole,
        user.apiKeyId,
        user.sealedApiKey,
        user.createdAt,
      ],
    )) as unknown[];
    return rows.length === 1;
  }

  async setPassword(id: string, passwordHash: string, at: Date): Promise<void> {
    await this.db.query(
      'UPDATE dashboard.users SET password_hash = $2, password_changed_at = $3 WHERE id = $1',
      [id, passwordHash, at],
    );
  }

  /** The account's users, owners first, then by when they joined (the Team page). */
  async ofAccount(accountId: string, db: Queryable = this.db): Promise<UserRow[]> {
    const rows = (await db.query(
      `SELECT ${COLUMNS} FROM dashboard.users WHERE account_id = $1
        ORDER BY account_role = 'member', created_at, email`,
      [accountId],
    )) as Raw[];
    return rows.map(rowOf);
  }

  /**
   * Runs `work` holding every user row of the account locked (`FOR UPDATE`, one connection):
   * two removals of the account's owners at once cannot leave it without one (ADR 0604).
   */
  async withAccountLocked<T>(
    accountId: string,
    work: (db: Queryable, rows: UserRow[]) => Promise<T>,
  ): Promise<T> {
    return this.db.transaction(async (manager) => {
      const rows = (await manager.query(
        `SELECT ${COLUMNS} FROM dashboard.users WHERE account_id = $1
          ORDER BY created_at, id FOR UPDATE`,
        [accountId],
      )) as Raw[];
      return work(manager, rows.map(rowOf));
    });
  }

  /** The user's place in their account (ADR 0604), inside `withAccountLocked`. */
  async setAccountRole(db: Queryable, id: string, role: AccountRole): Promise<void> {
    await db.query('UPDATE dashboard.users SET account_role = $2 WHERE id = $1', [id, role]);
  }

  /** Removes the user; their sessions go with the row (ON DELETE CASCADE). */
  async delete(db: Queryable, id: string): Promise<void> {
    await db.query('DELETE FROM dashboard.users WHERE id = $1', [id]);
  }
}

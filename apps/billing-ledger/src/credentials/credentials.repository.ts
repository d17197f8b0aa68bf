import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { returning } from '../db/returning';
import { newId } from './secrets';

export interface ApiKeyRow {
  seq: string;
  id: string;
  accountId: string;
  name: string;
  keyHash: string;
  keyHint: string;
  scopes: string[];
  /**
   * Held by the operator's side for the account (the dashboard's own key): never listed by the
   * account API and never deleted through it, only revoked by the operator.
   */
  managed: boolean;
  /**
   * Who made the key, as the operator's side names them (the dashboard's user id); inherited by
   * the keys this key makes. Null: made outside the dashboard.
   */
  createdBy: string | null;
  createdAt: Date;
  revokedAt: Date | null;
}

export interface AccessTokenRow {
  seq: string;
  id: string;
  accountId: string;
  network: string;
  name: string;
  tokenHash: string;
  tokenHint: string;
  createdAt: Date;
  revokedAt: Date | null;
}

/** Which keys a list holds: managed ones or not, active, revoked or both. */
export interface ApiKeyFilter {
  managed: boolean;
  state: 'active' | 'revoked' | 'all';
}

interface RawApiKey {
  seq: string;
  id: string;
  account_id: string;
  name: string;
  key_hash: string;
  key_hint: string;
  scopes: string[];
  managed: boolean;
  created_by: string | null;
  created_at: Date;
  revoked_at: Date | null;
}

interface RawAccessToken {
  seq: string;
  id: string;
  account_id: string;
  network: string;
  name: string;
  token_hash: string;
  token_hint: string;
  created_at: Date;
  revoked_at: Date | null;
}

const KEY_COLUMNS =
  'seq, id, account_id, name, key_hash, key_hint, scopes, managed, created_by, created_at, revoked_at';
const TOKEN_COLUMNS =
  'seq, id, account_id, network, name, token_hash, token_hint, created_at, revoked_at';

const apiKeyOf = (r: RawApiKey): ApiKeyRow => ({
  seq: r.seq,
  id: r.id,
  accountId: r.account_id,
  name: r.name,
  keyHash: r.key_hash,
  keyHint: r.key_hint,
  scopes: r.scopes,
  managed: r.managed,
  createdBy: r.created_by,
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
});

const tokenOf = (r: RawAccessToken): AccessTokenRow => ({
  seq: r.seq,
  id: r.id,
  accountId: r.account_id,
  network: r.network,
  name: r.name,
  tokenHash: r.token_hash,
  tokenHint: r.token_hint,
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
});

/** API keys and access tokens, stored as sha256 hashes only (plus a short hint for lists). */
@Injectable()
export class CredentialsRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Keys in one statement (one, or a bulk account creation's first keys), in input order. */
  async insertApiKeys(
    manager: EntityManager,
    inputs: ReadonlyArray<{
      accountId: string;
      name: string;
      keyHash: string;
      keyHint: string;
      scopes: string[];
      managed: boolean;
      createdBy: string | null;
      now: Date;
    }>,
  ): Promise<ApiKeyRow[]> {
    if (inputs.length === 0) return [];
    const ids = inputs.map(() => newId('key'));
    // Scopes are enum words (no commas), joined per key because unnest flattens text[][].
    const rows: RawApiKey[] = await manager.query(
      `INSERT INTO billing.api_keys (id, account_id, name, key_hash, key_hint, scopes, managed, created_by, created_at)
       SELECT v.id, v.account_id, v.name, v.key_hash, v.key_hint, string_to_array(v.scopes, ','), v.managed, v.created_by, v.created_at
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $8::boolean[], $9::text[], $7::timestamptz[])
              WITH ORDINALITY AS v(id, account_id, name, key_hash, key_hint, scopes, managed, created_by, created_at, n)
        ORDER BY v.n
       RETURNING ${KEY_COLUMNS}`,
      [
        ids,
        inputs.map((i) => i.accountId),
        inputs.map((i) => i.name),
        inputs.map((i) => i.keyHash),
        inputs.map((i) => i.keyHint),
        inputs.map((i) => i.scopes.join(',')),
        inputs.map((i) => i.now.toISOString()),
        inputs.map((i) => i.managed),
        inputs.map((i) => i.createdBy),
      ],
    );
    const byId = new Map(rows.map((r) => [r.id, apiKeyOf(r)]));
    return ids.map((id) => byId.get(id)!);
  }

  async activeApiKeyByHash(hash: string): Promise<ApiKeyRow | undefined> {
    const rows: RawApiKey[] = await this.dataSource.query(
      `SELECT ${KEY_COLUMNS} FROM billing.api_keys WHERE key_hash = $1 AND revoked_at IS NULL`,
      [hash],
    );
    return rows[0] ? apiKeyOf(rows[0]) : undefined;
  }

  /**
   * The account's keys, newest first (keyset on seq). The account API lists its own active keys
   * (`{ managed: false, state: 'active' }`: managed keys left out); the operator every key,
   * managed and revoked ones included unless `state` narrows them.
   */
  async listApiKeys(
    accountId: string,
    limit: number,
    cursor: string | undefined,
    which: ApiKeyFilter,
  ): Promise<ApiKeyRow[]> {
    const rows: RawApiKey[] = await this.dataSource.query(
      `SELECT ${KEY_COLUMNS} FROM billing.api_keys
        WHERE account_id = $1 AND ($2::bigint IS NULL OR seq < $2::bigint)
          AND ($4::boolean OR NOT managed)
          AND ($5::text = 'all' OR ($5::text = 'active') = (revoked_at IS NULL))
        ORDER BY seq DESC LIMIT $3`,
      [accountId, cursor ?? null, limit, which.managed, which.state],
    );
    return rows.map(apiKeyOf);
  }

  /** Flags these active keys managed (`ApiKeyRow.managed`); how many were not before. */
  async markManaged(ids: readonly string[]): Promise<number> {
    const rows = returning<{ id: string }>(
      await this.dataSource.query(
        `UPDATE billing.api_keys SET managed = true
          WHERE id = ANY($1::text[]) AND revoked_at IS NULL AND NOT managed RETURNING id`,
        [ids],
      ),
    );
    return rows.length;
  }

  /** The active key `id` of the account, locked until the caller's transaction ends. */
  async lockActiveApiKey(
    manager: EntityManager,
    accountId: string,
    id: string,
  ): Promise<ApiKeyRow | undefined> {
    const rows: RawApiKey[] = await manager.query(
      `SELECT ${KEY_COLUMNS} FROM billing.api_keys WHERE id = $1 AND account_id = $2 AND revoked_at IS NULL FOR UPDATE`,
      [id, accountId],
    );
    return rows[0] ? apiKeyOf(rows[0]) : undefined;
  }

  /**
   * The active key `id`, share-locked until the caller's transaction ends: a key making a key
   * holds it so, and a revocation (an UPDATE) waits for that key to be made, then sees it.
   */
  async shareLockActiveApiKey(manager: EntityManager, id: string): Promise<ApiKeyRow | undefined> {
    const rows: RawApiKey[] = await manager.query(
      `SELECT ${KEY_COLUMNS} FROM billing.api_keys WHERE id = $1 AND revoked_at IS NULL FOR SHARE`,
      [id],
    );
    return rows[0] ? apiKeyOf(rows[0]) : undefined;
  }

  /** Revokes the account's active keys labelled `createdBy`; the revoked rows. */
  async revokeApiKeysCreatedBy(
    manager: EntityManager,
    accountId: string,
    createdBy: string,
    now: Date,
  ): Promise<ApiKeyRow[]> {
    const rows = returning<RawApiKey>(
      await manager.query(
        `UPDATE billing.api_keys SET revoked_at = $3
          WHERE account_id = $1 AND created_by = $2 AND revoked_at IS NULL RETURNING ${KEY_COLUMNS}`,
        [accountId, createdBy, now.toISOString()],
      ),
    );
    return rows.map(apiKeyOf);
  }

  async revokeApiKey(
    manager: EntityManager,
    accountId: string,
    id: string,
    now: Date,
  ): Promise<ApiKeyRow | undefined> {
    const rows = returning<RawApiKey>(
      await manager.query(
        `UPDATE billing.api_keys SET revoked_at = $3 WHERE id = $1 AND account_id = $2 AND revoked_at IS NULL RETURNING ${KEY_COLUMNS}`,
        [id, accountId, now.toISOString()],
      ),
    );
    return rows[0] ? apiKeyOf(rows[0]) : undefined;
  }

  async insertAccessToken(
    manager: EntityManager,
    input: {
      accountId: string;
      network: string;
      name: string;
      tokenHash: string;
      tokenHint: string;
      now: Date;
    },
  ): Promise<AccessTokenRow> {
    const rows: RawAccessToken[] = await manager.query(
      `INSERT INTO billing.access_tokens (id, account_id, network, name, token_hash, token_hint, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${TOKEN_COLUMNS}`,
      [
        newId('tok'),
        input.accountId,
        input.network,
        input.name,
        input.tokenHash,
        input.tokenHint,
        input.now.toISOString(),
      ],
    );
    return tokenOf(rows[0]!);
  }

  /** A token of the account by id, active or not (what an `Idempotency-Key` made). */
  async accessTokenById(
    manager: EntityManager,
    accountId: string,
    id: string,
  ): Promise<AccessTokenRow | undefined> {
    const rows: RawAccessToken[] = await manager.query(
      `SELECT ${TOKEN_COLUMNS} FROM billing.access_tokens WHERE account_id = $1 AND id = $2`,
      [accountId, id],
    );
    return rows[0] ? tokenOf(rows[0]) : undefined;
  }

  /** A key of the account by id, active or not (what an `Idempotency-Key` made). */
  async apiKeyById(
    manager: EntityManager,
    accountId: string,
    id: string,
  ): Promise<ApiKeyRow | undefined> {
    const rows: RawApiKey[] = await manager.query(
      `SELECT ${KEY_COLUMNS} FROM billing.api_keys WHERE account_id = $1 AND id = $2`,
      [accountId, id],
    );
    return rows[0] ? apiKeyOf(rows[0]) : undefined;
  }

  async countActiveTokens(manager: EntityManager, accountId: string): Promise<number> {
    const rows: Array<{ n: string }> = await manager.query(
      'SELECT count(*) AS n FROM billing.access_tokens WHERE account_id = $1 AND revoked_at IS NULL',
      [accountId],
    );
    return Number(rows[0]!.n);
  }

  async activeTokenByHash(hash: string): Promise<AccessTokenRow | undefined> {
    const rows: RawAccessToken[] = await this.dataSource.query(
      `SELECT ${TOKEN_COLUMNS} FROM billing.access_tokens WHERE token_hash = $1 AND revoked_at IS NULL`,
      [hash],
    );
    return rows[0] ? tokenOf(rows[0]) : undefined;
  }

  async listAccessTokens(
    accountId: string,
    limit: number,
    cursor?: string,
  ): Promise<AccessTokenRow[]> {
    const rows: RawAccessToken[] = await this.dataSource.query(
      `SELECT ${TOKEN_COLUMNS} FROM billing.access_tokens WHERE account_id = $1 AND revoked_at IS NULL AND ($2::bigint IS NULL OR seq < $2::bigint)
        ORDER BY seq DESC LIMIT $3`,
      [accountId, cursor ?? null, limit],
    );
    return rows.map(tokenOf);
  }

  async revokeAccessToken(
    manager: EntityManager,
    accountId: string,
    id: string,
    reason: 'rolled' | 'deleted',
    now: Date,
  ): Promise<AccessTokenRow | undefined> {
    const rows = returning<RawAccessToken>(
      await manager.query(
        `UPDATE billing.access_tokens SET revoked_at = $3, revoked_reason = $4
        WHERE id = $1 AND account_id = $2 AND revoked_at IS NULL RETURNING ${TOKEN_COLUMNS}`,
        [id, accountId, now.toISOString(), reason],
      ),
    );
    return rows[0] ? tokenOf(rows[0]) : undefined;
  }

  /**
   * Revokes again the credentials a revocation names (id and hash both, so an entry never hits
   * another credential) that are active here: a database restored from before the revocation
   * (RevocationReplay). The same rule as every other revocation: revoked_at set, once. The ids
   * revoked, API keys and access tokens.
   */
  async reapplyRevocations(
    revocations: ReadonlyArray<{
      credentialType: 'api_key' | 'access_token';
      credentialId: string;
      credentialHash: string;
      reason: string;
      at: string;
    }>,
  ): Promise<{ apiKeys: string[]; accessTokens: string[] }> {
    const of = (type: 'api_key' | 'access_token') => {
      const picked = revocations.filter((r) => r.credentialType === type);
      return [
        picked.map((r) => r.credentialId),
        picked.map((r) => r.credentialHash),
        picked.map((r) => r.at),
        picked.map((r) => r.reason),
      ];
    };
    const keys = returning<{ id: string }>(
      await this.dataSource.query(
        `UPDATE billing.api_keys k SET revoked_at = v.at
           FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS v(id, hash, at)
          WHERE k.id = v.id AND k.key_hash = v.hash AND k.revoked_at IS NULL RETURNING k.id`,
        of('api_key').slice(0, 3),
      ),
    );
    const tokens = returning<{ id: string }>(
      await this.dataSource.query(
        `UPDATE billing.access_tokens t SET revoked_at = v.at, revoked_reason = v.reason
           FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::text[])
             AS v(id, hash, at, reason)
          WHERE t.id = v.id AND t.token_hash = v.hash AND t.revoked_at IS NULL RETURNING t.id`,
        of('access_token'),
      ),
    );
    return { apiKeys: keys.map((r) => r.id), accessTokens: tokens.map((r) => r.id) };
  }

  /** Serialises credential changes of one account (the token cap check counts under it). */
  async lockAccount(manager: EntityManager, accountId: string): Promise<boolean> {
    const rows: unknown[] = await manager.query(
      'SELECT id FROM billing.accounts WHERE id = $1 FOR UPDATE',
      [accountId],
    );
    return rows.length > 0;
  }
}

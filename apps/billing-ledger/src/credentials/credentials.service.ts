import { Inject, Injectable } from '@nestjs/common';
import { credentialRevokedId, type CredentialRevoked } from '@meridian/contracts';
import { DomainError } from '@meridian/errors';
import type { Clock } from '@meridian/time';
import { DataSource, type EntityManager } from 'typeorm';
import { AccountWrites } from '../accounts/account-writes';
import { CLOCK } from '../clock/clock.token';
import { ChangeSignal } from '../ledger/change-signal';
import { LedgerRepository, type BalanceRow } from '../ledger/ledger.repository';
import { OutboxRepository } from '../outbox/outbox.repository';
import { capsOf } from '../state/account-state';
import {
  CredentialsRepository,
  type AccessTokenRow,
  type ApiKeyFilter,
  type ApiKeyRow,
} from './credentials.repository';
import { hashSecret, hintOf, newAccessToken, newApiKey } from './secrets';
import { IdempotencyKeys } from '../idempotency/idempotency-keys.service';

export interface Created<T> {
  row: T;
  /** The plain secret: returned once, never stored. */
  secret: string;
}

/**
 * A create with an `Idempotency-Key` (ADR 0110 amendment "Credential creates take an
 * Idempotency-Key"): what it made, or, for a repeat of the key's first request, the credential
 * that request made (`earlier`, active or not; its secret was shown once and is not stored).
 */
export type CreatedOnce<T> = Created<T> | { earlier: T };

/**
 * What a credential create's `Idempotency-Key` is bound to: the operation (`requestFingerprint`)
 * and how a repeat finds what the key's first use made.
 */
interface CreateKind<T> {
  operation: string;
  /** The credential a first use made, by id, of the account. */
  find: (manager: EntityManager, accountId: string, id: string) => Promise<T | undefined>;
  /** Its name in the error of a result that is not the account's. */
  what: string;
}

const notFound = () => new DomainError('not_found', 'not_found', 'not found');

/**
 * API keys and access tokens. Secrets are generated here, returned once and stored as sha256
 * hashes; a revocation (delete, roll) goes through the outbox so the revoked-credentials KV
 * bucket and event reach every cache.
 */
@Injectable()
export class CredentialsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly credentials: CredentialsRepository,
    private readonly ledger: LedgerRepository,
    private readonly outbox: OutboxRepository,
    private readonly signal: ChangeSignal,
    private readonly idempotency: IdempotencyKeys,
    private readonly writes: AccountWrites,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  private readonly apiKeyCreate: CreateKind<ApiKeyRow> = {
    operation: 'api-key-create',
    find: (manager, accountId, id) => this.credentials.apiKeyById(manager, accountId, id),
    what: 'key',
  };

  private readonly accessTokenCreate: CreateKind<AccessTokenRow> = {
    operation: 'access-token-create',
    find: (manager, accountId, id) => this.credentials.accessTokenById(manager, accountId, id),
    what: 'token',
  };

  /**
   * A credential create under its request's `Idempotency-Key` (caller's transaction), the one
   * home of the claim-then-record steps (ADR 0110 amendment "Credential creates take an
   * Idempotency-Key"): without a key, `make` makes one. With one, the key is claimed for
   * `kind`'s operation bound to `request` (`IdempotencyKeys.claimCreate`, which holds it until
   * this transaction ends, so one key makes one credential however many requests carry it at
   * once; another request with it is 409 `idempotency_key_reused`); a repeat of its first use
   * answers what that made (`earlier`, active or not) and makes nothing, the first use runs
   * `make` (whose checks, a cap or the maker's lock, refuse as without a key) and records its
   * credential as the key's result in the same transaction.
   */
  private async createOnce<T extends { id: string }>(
    manager: EntityManager,
    accountId: string,
    requestKey: string | null,
    kind: CreateKind<T>,
    request: unknown,
    make: () => Promise<Created<T>>,
  ): Promise<CreatedOnce<T>> {
    if (requestKey === null) return make();
    const earlier = await this.idempotency.claimCreate(
      manager,
      accountId,
      requestKey,
      kind.operation,
      request,
    );
    if (earlier !== null) {
      const row = await kind.find(manager, accountId, earlier);
      if (!row)
        throw new Error(`idempotency key result ${earlier} is not a ${kind.what} of the account`);
      return { earlier: row };
    }
    const made = await make();
    await this.idempotency.recordResult(manager, accountId, requestKey, made.row.id);
    return made;
  }

  /**
   * One key of the account (the account API's `POST /api-keys`, the operator's
   * `POST /admin/accounts/{id}/api-keys`); `managed`: held by the operator's side (the
   * dashboard's own key, ADR 0110), never listed to the account nor deleted by it.
   */
  async createApiKey(
    accountId: string,
    key: { name: string; scopes: string[]; managed?: boolean },
  ): Promise<Created<ApiKeyRow>> {
    const [created] = await this.writes.run(accountId, () =>
      this.dataSource.transaction((manager) =>
        this.makeApiKeys(manager, [
          {
            accountId,
            name: key.name,
            scopes: key.scopes,
            managed: key.managed ?? false,
            createdBy: null,
          },
        ]),
      ),
    );
    return created!;
  }

  /**
   * A key made through the account API (`POST /api-keys`) with the key `maker`, which reaches no
   * further than the maker (ADR 0110 amendment): only scopes the maker holds (403
   * `scope_not_held`), and the maker's `createdBy`, which a managed key (the dashboard's) may name
   * in its stead (the user it makes the key for); any other key naming one is 403
   * `created_by_not_allowed`. The maker is share-locked while the key is made: a maker revoked
   * meanwhile makes nothing (401), and a revocation of the maker's keys waits and then sees it.
   * `requestKey`: the request's `Idempotency-Key`, bound to the validated body (scopes as a set)
   * after the checks above; a repeat answers the key its first use made (`earlier`), another
   * request with it is 409 `idempotency_key_reused`; one key makes one API key however many
   * requests carry it at once (`IdempotencyKeys.claimCreate`).
   */
  async createApiKeyWithKey(
    maker: ApiKeyRow,
    key: { name: string; scopes: string[]; createdBy?: string },
    requestKey: string | null = null,
  ): Promise<CreatedOnce<ApiKeyRow>> {
    const missing = [...new Set(key.scopes)].filter((scope) => !maker.scopes.includes(scope));
    if (missing.length > 0)
      throw new DomainError(
        'scope_not_held',
        'forbidden',
        `an API key makes keys only with scopes it holds itself; this one lacks ${missing.join(', ')}`,
        { details: { missing, held: maker.scopes } },
      );
    const createdBy = actingPerson(maker, key.createdBy);
    return this.writes.run(maker.accountId, () =>
      this.createApiKeyNow(maker, key, createdBy, requestKey),
    );
  }

  private createApiKeyNow(
    maker: ApiKeyRow,
    key: { name: string; scopes: string[]; createdBy?: string },
    createdBy: string | null,
    requestKey: string | null,
  ): Promise<CreatedOnce<ApiKeyRow>> {
    return this.dataSource.transaction(async (manager) => {
      if (!(await this.credentials.shareLockActiveApiKey(manager, maker.id)))
        throw new DomainError('unauthorized', 'unauthenticated', 'missing or invalid API key');
      return this.createOnce(
        manager,
        maker.accountId,
        requestKey,
        this.apiKeyCreate,
        {
          name: key.name,
          scopes: [...new Set(key.scopes)].sort(),
          ...(key.createdBy === undefined ? {} : { created_by: key.createdBy }),
        },
        async () => {
          const [made] = await this.makeApiKeys(manager, [
            {
              accountId: maker.accountId,
              name: key.name,
              scopes: key.scopes,
              managed: false,
              createdBy,
            },
          ]);
          return made!;
        },
      );
    });
  }

  /**
   * Revokes every active key of the account labelled `createdBy` (a removed team member's, ADR
   * 0604), each revocation published; the ids revoked. Rounds until one revokes nothing: a key
   * made by a labelled key while a round ran (it waited for the maker's lock) is labelled too
   * and committed before its maker's revocation, so the next round sees it.
   */
  async revokeApiKeysCreatedBy(accountId: string, createdBy: string): Promise<string[]> {
    const revoked: string[] = [];
    for (;;) {
      const now = this.clock.now();
      const rows = await this.dataSource.transaction(async (manager) => {
        const round = await this.credentials.revokeApiKeysCreatedBy(
          manager,
          accountId,
          createdBy,
          now,
        );
        for (const row of round)
          await this.outbox.add(
            manager,
            'credentialRevoked',
            this.revoked(row.accountId, 'api_key', row.id, row.keyHash, undefined, 'revoked', now),
            now,
          );
        return round;
      });
      if (rows.length === 0) break;
      revoked.push(...rows.map((row) => row.id));
    }
    if (revoked.length > 0) this.signal.changed();
    return revoked;
  }

  /**
   * The initial keys of new accounts, one per account (caller's transaction), in input order;
   * `managed`: held by the operator's side (the dashboard's own key, `ApiKeyRow.managed`).
   */
  createInitialApiKeys(
    manager: EntityManager,
    keys: ReadonlyArray<{ accountId: string; scopes: string[]; managed: boolean }>,
  ): Promise<Array<Created<ApiKeyRow>>> {
    return this.makeApiKeys(
      manager,
      keys.map((key) => ({ ...key, name: 'initial', createdBy: null })),
    );
  }

  /** Where every API key is made: its secret (returned once), hash, hint and sorted scopes. */
  private async makeApiKeys(
    manager: EntityManager,
    keys: ReadonlyArray<{
      accountId: string;
      name: string;
      scopes: string[];
      managed: boolean;
      createdBy: string | null;
    }>,
  ): Promise<Array<Created<ApiKeyRow>>> {
    const now = this.clock.now();
    const secrets = keys.map(() => newApiKey());
    const rows = await this.credentials.insertApiKeys(
      manager,
      keys.map((key, i) => ({
        accountId: key.accountId,
        name: key.name,
        keyHash: hashSecret(secrets[i]!),
        keyHint: hintOf(secrets[i]!),
        scopes: [...new Set(key.scopes)].sort(),
        managed: key.managed,
        createdBy: key.createdBy,
        now,
      })),
    );
    return rows.map((row, i) => ({ row, secret: secrets[i]! }));
  }

  /** The account API's list: its active keys, managed ones left out (ADR 0110). */
  listApiKeys(accountId: string, limit: number, cursor?: string): Promise<ApiKeyRow[]> {
    return this.credentials.listApiKeys(accountId, limit, cursor, {
      managed: false,
      state: 'active',
    });
  }

  /**
   * The operator's list: every key of the account, managed ones (the dashboard's) included, so
   * one can be found and revoked; `state` narrows it to active or revoked keys.
   */
  listApiKeysForOperator(
    accountId: string,
    limit: number,
    cursor: string | undefined,
    state: ApiKeyFilter['state'],
  ): Promise<ApiKeyRow[]> {
    return this.credentials.listApiKeys(accountId, limit, cursor, { managed: true, state });
  }

  /** Operator: flags keys the operator's side holds as managed (made before the flag). */
  markManaged(ids: readonly string[]): Promise<number> {
    return this.credentials.markManaged(ids);
  }

  /**
   * Revokes a key of the account. The account API (`by: 'account'`) may not revoke a managed
   * key: it is the one the operator's side (the dashboard) signs the account's calls with, and
   * losing it would lock the customer out with no way back (QA). 403 managed_key; the operator
   * API revokes any key.
   */
  async revokeApiKey(accountId: string, id: string, by: 'account' | 'operator'): Promise<void> {
    const now = this.clock.now();
    await this.dataSource.transaction(async (manager) => {
      const active = await this.credentials.lockActiveApiKey(manager, accountId, id);
      if (!active) throw notFound();
      if (active.managed && by === 'account')
        throw new DomainError(
          'managed_key',
          'forbidden',
          'this key is managed by the operator (the dashboard signs in with it); it cannot be deleted through the account API',
        );
      if (!(await this.revokeIn(manager, accountId, id, now))) throw notFound();
    });
    this.signal.changed();
  }

  /**
   * A new key in place of `previousId` (caller's transaction; `signal.changed()` after its
   * commit): the previous one revoked, its revocation published, unless it is revoked already.
   * A repeated `POST /admin/accounts` (ADR 0110 amendment): the secret of the key the earlier
   * answer carried was shown once, to a caller that did not keep it, and is never stored.
   */
  async reissueInitialApiKey(
    manager: EntityManager,
    accountId: string,
    previousId: string,
    key: { scopes: string[]; managed: boolean },
  ): Promise<Created<ApiKeyRow>> {
    await this.revokeIn(manager, accountId, previousId, this.clock.now());
    const [created] = await this.createInitialApiKeys(manager, [{ accountId, ...key }]);
    return created!;
  }

  /** Revokes an active key and queues its revocation; false when it was not active. */
  private async revokeIn(
    manager: EntityManager,
    accountId: string,
    id: string,
    now: Date,
  ): Promise<boolean> {
    const row = await this.credentials.revokeApiKey(manager, accountId, id, now);
    if (!row) return false;
    await this.outbox.add(
      manager,
      'credentialRevoked',
      this.revoked(row.accountId, 'api_key', row.id, row.keyHash, undefined, 'revoked', now),
      now,
    );
    return true;
  }

  /**
   * A new token within the plan's cap (409 `cap_access_tokens_exceeded`). `requestKey`: the
   * request's `Idempotency-Key`, bound to `{network, name}` (the default name written out)
   * before the cap is counted; a repeat answers the token its first use made (`earlier`), which
   * holds the one slot, another request with it is 409 `idempotency_key_reused`, and one key
   * makes one token however many requests carry it at once (`IdempotencyKeys.claimCreate`).
   * It takes the account's turn before a connection (`AccountWrites`): it counts under the
   * account's row lock.
   */
  async createAccessToken(
    accountId: string,
    network: string,
    name: string,
    requestKey: string | null = null,
  ): Promise<CreatedOnce<AccessTokenRow>> {
    return this.writes.run(accountId, () =>
      this.createAccessTokenNow(accountId, network, name, requestKey),
    );
  }

  private createAccessTokenNow(
    accountId: string,
    network: string,
    name: string,
    requestKey: string | null,
  ): Promise<CreatedOnce<AccessTokenRow>> {
    return this.dataSource.transaction((manager) =>
      this.createOnce(
        manager,
        accountId,
        requestKey,
        this.accessTokenCreate,
        { network, name },
        async () => {
          const account = await this.lockedAccount(manager, accountId);
          const cap = capsOf(account).accessTokens;
          const held = await this.credentials.countActiveTokens(manager, accountId);
          if (held >= cap) {
            throw new DomainError(
              'cap_access_tokens_exceeded',
              'conflict',
              `the plan allows ${cap} access tokens`,
              { details: { limit: cap } },
            );
          }
          return this.insertToken(manager, accountId, network, name);
        },
      ),
    );
  }

  listAccessTokens(accountId: string, limit: number, cursor?: string): Promise<AccessTokenRow[]> {
    return this.credentials.listAccessTokens(accountId, limit, cursor);
  }

  /**
   * New secret (and id) for the same network and name; the old token stops resolving at once.
   * In the account's turn (`AccountWrites`): it locks the account's row.
   */
  async rollAccessToken(accountId: string, id: string): Promise<Created<AccessTokenRow>> {
    const result = await this.writes.run(accountId, () => this.rollAccessTokenNow(accountId, id));
    this.signal.changed();
    return result;
  }

  private rollAccessTokenNow(accountId: string, id: string): Promise<Created<AccessTokenRow>> {
    const now = this.clock.now();
    return this.dataSource.transaction(async (manager) => {
      await this.lockedAccount(manager, accountId);
      const old = await this.credentials.revokeAccessToken(manager, accountId, id, 'rolled', now);
      if (!old) throw notFound();
      await this.outbox.add(
        manager,
        'credentialRevoked',
        this.revoked(accountId, 'access_token', old.id, old.tokenHash, old.network, 'rolled', now),
        now,
      );
      return this.insertToken(manager, accountId, old.network, old.name);
    });
  }

  async deleteAccessToken(accountId: string, id: string): Promise<void> {
    const now = this.clock.now();
    await this.dataSource.transaction(async (manager) => {
      const old = await this.credentials.revokeAccessToken(manager, accountId, id, 'deleted', now);
      if (!old) throw notFound();
      await this.outbox.add(
        manager,
        'credentialRevoked',
        this.revoked(accountId, 'access_token', old.id, old.tokenHash, old.network, 'deleted', now),
        now,
      );
    });
    this.signal.changed();
  }

  async resolveAccessToken(
    token: string,
  ): Promise<{ token: AccessTokenRow; account: BalanceRow } | undefined> {
    if (token.length === 0 || token.length > 256) return undefined;
    const row = await this.credentials.activeTokenByHash(hashSecret(token));
    if (!row) return undefined;
    const account = await this.ledger.find(row.accountId);
    return account ? { token: row, account } : undefined;
  }

  async resolveApiKey(key: string): Promise<{ key: ApiKeyRow; account: BalanceRow } | undefined> {
    if (key.length === 0 || key.length > 256) return undefined;
    const row = await this.credentials.activeApiKeyByHash(hashSecret(key));
    if (!row) return undefined;
    const account = await this.ledger.find(row.accountId);
    return account ? { key: row, account } : undefined;
  }

  private async insertToken(
    manager: EntityManager,
    accountId: string,
    network: string,
    name: string,
  ): Promise<Created<AccessTokenRow>> {
    const secret = newAccessToken();
    const row = await this.credentials.insertAccessToken(manager, {
      accountId,
      network,
      name,
      tokenHash: hashSecret(secret),
      tokenHint: hintOf(secret),
      now: this.clock.now(),
    });
    return { row, secret };
  }

  private async lockedAccount(manager: EntityManager, accountId: string): Promise<BalanceRow> {
    const account = (await this.ledger.lock(manager, [accountId])).get(accountId);
    if (!account) throw notFound();
    return account;
  }

  private revoked(
    accountId: string,
    credentialType: 'access_token' | 'api_key',
    credentialId: string,
    credentialHash: string,
    network: string | undefined,
    reason: CredentialRevoked['reason'],
    now: Date,
  ): CredentialRevoked {
    return {
      id: credentialRevokedId(credentialId),
      accountId,
      credentialType,
      credentialId,
      credentialHash: credentialHash.trim(),
      ...(network ? { network } : {}),
      reason,
      at: now.toISOString(),
    };
  }
}

/**
 * Who acts with the key `maker` (ADR 0110 amendment, ADR 0604): a managed key (the dashboard's)
 * may name the person it acts for (`named`); any other key naming one is 403
 * `created_by_not_allowed`. Unnamed, the key's own maker: what a key makes or buys is its
 * maker's, so no key sheds its label. Null: a key of no person.
 */
export function actingPerson(maker: ApiKeyRow, named: string | undefined): string | null {
  if (named !== undefined && !maker.managed)
    throw new DomainError(
      'created_by_not_allowed',
      'forbidden',
      'only the dashboard names who acts with a key; what this key makes or buys carries its maker',
    );
  return named ?? maker.createdBy;
}

import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@meridian/errors';
import { LOGGER } from '@meridian/platform-observability';
import type { Logger } from 'pino';
import { Counter, Registry } from 'prom-client';
import { UsersRepository, type UserRow } from '../auth/users.repository';
import { AccountSecrets } from '../secrets/account-secrets';
import { ManagedKeys } from '../upstream/managed-keys';
import {
  UpstreamClient,
  upstreamError,
  type Upstream,
  type UpstreamAnswer,
  type UpstreamCall,
} from '../upstream/upstream.client';

/**
 * What a renewal came to (`dashboard_account_key_renewals_total{outcome}`):
 * - `renewed`: billing made a new managed key, sealed and stored in place of the refused one;
 * - `shared`: another request or replica had renewed it meanwhile: its key is used, none made;
 * - `not_revoked`: billing still takes the stored key (the 401 came from elsewhere): none made;
 * - `refused`: billing would not make one (the account gone, or any other refusal);
 * - `rejected_again`: the call with the new key was refused too.
 */
export type RenewalOutcome = 'renewed' | 'shared' | 'not_revoked' | 'refused' | 'rejected_again';

/** A user's call to an API, without its bearer (the account's key is added here). */
export type AccountCall = Omit<UpstreamCall, 'bearer'>;

const rejected = (upstream: Upstream) =>
  new DomainError('account_key_rejected', 'unavailable', `${upstream} refused the account's key`);

/**
 * The one way the dashboard calls an API as a user: with the account's sealed key, opened here
 * for server-side calls only. A 401 means the stored key was refused (the operator revoked it,
 * ADR 0110): the key is renewed once (a new managed key from billing-ledger's operator API,
 * sealed and stored as sign-up does) and the call made again with it; a key that cannot be
 * renewed, or a new key refused too, answers 503 `account_key_rejected`, never a loop.
 *
 * One renewal per user at a time: concurrent requests of this process share one (`renewing`),
 * and across replicas the user's row is locked (`FOR UPDATE`) while billing is asked, so a
 * request that waited for it finds the key already renewed and uses it (ADR 0110 amendment).
 */
@Injectable()
export class AccountKeyService {
  private readonly renewing = new Map<string, Promise<string>>();
  private readonly renewals: Counter<'outcome'>;

  constructor(
    private readonly secrets: AccountSecrets,
    private readonly upstream: UpstreamClient,
    private readonly users: UsersRepository,
    private readonly managedKeys: ManagedKeys,
    @Inject(LOGGER) private readonly logger: Logger,
    registry: Registry,
  ) {
    this.renewals = new Counter({
      name: 'dashboard_account_key_renewals_total',
      help: "Renewals of an account's API key after an API refused it (renewed, shared, not_revoked, refused, rejected_again)",
      labelNames: ['outcome'],
      registers: [registry],
    });
  }

  /** `UpstreamClient.call` as the user; a 401 renews the account's key once and calls again. */
  async call(
    user: UserRow,
    upstream: Upstream,
    method: string,
    path: string,
    call: AccountCall = {},
  ): Promise<UpstreamAnswer> {
    const first = await this.upstream.call(upstream, method, path, {
      ...call,
      bearer: this.keyOf(user),
    });
    if (first.status !== 401) return first;
    const key = await this.renewed(user, upstream);
    const second = await this.upstream.call(upstream, method, path, { ...call, bearer: key });
    if (second.status !== 401) return second;
    this.count(user, 'rejected_again', { upstream }, 'error');
    throw rejected(upstream);
  }

  /** As `call`, for the BFF's own use of an answer: a non-2xx becomes a DomainError. */
  async json<T>(
    user: UserRow,
    upstream: Upstream,
    method: string,
    path: string,
    call: AccountCall = {},
  ): Promise<T> {
    const answer = await this.call(user, upstream, method, path, call);
    if (answer.status >= 200 && answer.status < 300) return answer.body as T;
    throw upstreamError(upstream, answer);
  }

  private keyOf(user: UserRow): string {
    if (!user.sealedApiKey)
      throw new DomainError('no_account', 'forbidden', 'this user has no billing account');
    return this.secrets.open(user.id, user.sealedApiKey);
  }

  /** The renewed key; one renewal of a user at a time in this process. */
  private renewed(user: UserRow, upstream: Upstream): Promise<string> {
    let pending = this.renewing.get(user.id);
    if (!pending) {
      pending = this.renew(user, upstream).finally(() => this.renewing.delete(user.id));
      this.renewing.set(user.id, pending);
    }
    return pending;
  }

  private async renew(user: UserRow, upstream: Upstream): Promise<string> {
    let made: { accountId: string; keyId: string } | undefined;
    try {
      return await this.users.withUserLocked(user.id, async (db, row) => {
        if (!row?.accountId || !row.sealedApiKey) throw rejected(upstream);
        if (row.apiKeyId !== user.apiKeyId) {
          this.count(row, 'shared', { upstream }, 'info');
          return this.keyOf(row);
        }
        // Billing decides whether the key is revoked: a 401 of another API for a key billing
        // takes would otherwise make a new key at each request.
        const check = await this.upstream.call('billing', 'GET', '/account', {
          bearer: this.keyOf(row),
        });
        if (check.status >= 500) {
          this.count(row, 'refused', { upstream, billingStatus: check.status }, 'error');
          throw upstreamError('billing', check);
        }
        if (check.status !== 401) {
          this.count(row, 'not_revoked', { upstream, billingStatus: check.status }, 'error');
          throw rejected(upstream);
        }
        const created = await this.managedKeys.make(row.accountId);
        if (!created.made) {
          const { answer } = created;
          const error = (answer.body as { error?: unknown } | null)?.error;
          this.count(row, 'refused', { upstream, billingStatus: answer.status, error }, 'error');
          throw rejected(upstream);
        }
        made = { accountId: row.accountId, keyId: created.id };
        await this.users.setApiKey(db, row.id, created.id, this.secrets.seal(created.key));
        this.count(row, 'renewed', { upstream, revokedKeyId: row.apiKeyId, keyId: created.id });
        return created.key;
      });
    } catch (error) {
      // Made but not stored (a database error): the key nobody holds is revoked again.
      if (made) await this.managedKeys.revoke(made.accountId, made.keyId);
      throw error;
    }
  }

  private count(
    user: Pick<UserRow, 'id' | 'accountId'>,
    outcome: RenewalOutcome,
    fields: Record<string, unknown>,
    level: 'info' | 'warn' | 'error' = 'warn',
  ): void {
    this.renewals.inc({ outcome });
    this.logger[level](
      { userId: user.id, accountId: user.accountId, outcome, ...fields },
      "account's API key refused by an API: renewal " + outcome,
    );
  }
}

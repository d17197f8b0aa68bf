import { Inject, Injectable } from '@nestjs/common';
import { LOGGER } from '@meridian/platform-observability';
import type { Logger } from 'pino';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import { UpstreamClient, type UpstreamAnswer } from './upstream.client';

/**
 * billing-ledger's API key scopes (its `API_KEY_SCOPES`): the key the dashboard holds for a user
 * has every one (sign-up, renewal, a member), `plan` included, so an owner's Plan page changes
 * the plan (a member is refused by the relay first); a user's own keys take a subset.
 */
export const ACCOUNT_KEY_SCOPES = ['account', 'plan', 'webhooks', 'audit'] as const;

/** The name billing-ledger shows for a managed key the dashboard made after sign-up. */
export const RENEWED_KEY_NAME = 'dashboard';

/** A managed key billing made (its secret, shown once), or billing's answer refusing it. */
export type MadeKey =
  { made: true; id: string; key: string } | { made: false; answer: UpstreamAnswer };

/**
 * The dashboard's managed keys of an existing account, through billing-ledger's operator API
 * (ADR 0110 amendment): one made for a user (a renewal of a revoked key, a team member joining,
 * ADR 0604) and one revoked (a removed member's, or one made and not stored).
 */
@Injectable()
export class ManagedKeys {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly upstream: UpstreamClient,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** `POST /admin/accounts/{id}/api-keys`: a managed key of every scope. */
  async make(accountId: string): Promise<MadeKey> {
    const answer = await this.upstream.call('billing', 'POST', keysPath(accountId), {
      bearer: this.config.OPERATOR_TOKEN,
      body: { name: RENEWED_KEY_NAME, scopes: ACCOUNT_KEY_SCOPES, managed: true },
    });
    const created = answer.body as { id?: unknown; key?: unknown } | null;
    return answer.status === 201 &&
      typeof created?.id === 'string' &&
      typeof created.key === 'string'
      ? { made: true, id: created.id, key: created.key }
      : { made: false, answer };
  }

  /**
   * Revokes a key of the account; an answer of 404 (no such active key) is as good as revoked.
   * False, logged, when billing refused or could not be reached.
   */
  async revoke(accountId: string, keyId: string): Promise<boolean> {
    const path = `${keysPath(accountId)}/${encodeURIComponent(keyId)}`;
    const answer = await this.upstream
      .call('billing', 'DELETE', path, { bearer: this.config.OPERATOR_TOKEN })
      .catch(() => undefined);
    const done = answer?.status === 204 || answer?.status === 404;
    if (!done)
      this.logger.error(
        { accountId, keyId, status: answer?.status },
        "could not revoke a dashboard key in billing: the operator's to revoke",
      );
    return done;
  }

  /**
   * Revokes every key of the account billing labels as made by `userId` (made through the
   * dashboard, and the keys those made): a removed team member's (ADR 0604). The ids revoked;
   * undefined, logged, when billing refused or could not be reached.
   */
  async revokeMadeBy(accountId: string, userId: string): Promise<string[] | undefined> {
    const answer = await this.upstream
      .call('billing', 'POST', `${keysPath(accountId)}/revoke-created-by`, {
        bearer: this.config.OPERATOR_TOKEN,
        body: { created_by: userId },
      })
      .catch(() => undefined);
    const revoked = (answer?.body as { revoked?: unknown } | null | undefined)?.revoked;
    if (answer?.status === 200 && Array.isArray(revoked)) return revoked as string[];
    this.logger.error(
      { accountId, userId, status: answer?.status },
      'could not revoke the keys a removed user made in billing',
    );
    return undefined;
  }
}

function keysPath(accountId: string): string {
  return `/admin/accounts/${encodeURIComponent(accountId)}/api-keys`;
}

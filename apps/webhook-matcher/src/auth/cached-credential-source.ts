import { ApiKeyCache, type JetStreamConsumers } from '@meridian/platform-messaging';
import type { Clock } from '@meridian/time';
import type { Registry } from 'prom-client';
import type { AccountFacts, ApiKeyPrincipal, CredentialSource } from './credential-source';

/**
 * Keys are cached like audit-api's (`ApiKeyCache`: kept for the TTL, evicted as soon as
 * billing-ledger's revoked-credentials feed names them): the management API is called in
 * bursts (dashboards, scripts). Account facts are never cached: caps and the balance decide
 * writes.
 */
export class CachedCredentialSource implements CredentialSource {
  private readonly cache: ApiKeyCache<ApiKeyPrincipal>;

  constructor(
    private readonly inner: CredentialSource,
    clock: Clock,
    ttlMs: number,
    maxEntries?: number,
  ) {
    this.cache = new ApiKeyCache(
      (key) => inner.resolveApiKey(key),
      () => clock.now().getTime(),
      ttlMs,
      maxEntries,
    );
  }

  resolveApiKey(key: string): Promise<ApiKeyPrincipal | null> {
    return this.cache.get(key);
  }

  accountFacts(accountId: string): Promise<AccountFacts> {
    return this.inner.accountFacts(accountId);
  }

  /** Evicts keys as billing-ledger revokes them (KvBuckets.revokedCredentials). */
  watch(consumers: JetStreamConsumers): this {
    this.cache.watch(consumers);
    return this;
  }

  /** Counts the lookups answered from a key known before while billing-ledger failed. */
  count(registry: Registry): this {
    this.cache.count(registry);
    return this;
  }
}

import { ApiKeyCache, type JetStreamConsumers } from '@meridian/platform-messaging';
import type { Clock } from '@meridian/time';
import type { Registry } from 'prom-client';
import type { ApiKeyPrincipal, CredentialSource } from './credential-source';

/**
 * billing-ledger's key lookups behind an `ApiKeyCache`: answers are kept for the TTL, and a key
 * deleted or revoked at billing-ledger is evicted as soon as its revocation reaches the
 * revoked-credentials feed (`watch`), not when the TTL ends.
 */
export class CachedCredentialSource implements CredentialSource {
  private readonly cache: ApiKeyCache<ApiKeyPrincipal>;

  constructor(inner: CredentialSource, clock: Clock, ttlMs: number, maxEntries?: number) {
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

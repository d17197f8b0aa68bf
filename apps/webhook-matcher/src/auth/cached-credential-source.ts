import type { Clock } from '@meridian/time';
import type { AccountFacts, ApiKeyPrincipal, CredentialSource } from './credential-source';

/**
 * Keys are cached for the TTL (positive and negative, concurrent misses share one call), like
 * audit-api: the management API is called in bursts (dashboards, scripts). Account facts are
 * never cached: caps and the balance decide writes.
 */
export class CachedCredentialSource implements CredentialSource {
  private readonly entries = new Map<
    string,
    { value: ApiKeyPrincipal | null; expiresAt: number }
  >();
  private readonly inFlight = new Map<string, Promise<ApiKeyPrincipal | null>>();

  constructor(
    private readonly inner: CredentialSource,
    private readonly clock: Clock,
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  async resolveApiKey(key: string): Promise<ApiKeyPrincipal | null> {
    const now = this.clock.now().getTime();
    const hit = this.entries.get(key);
    if (hit && hit.expiresAt > now) return hit.value;
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    const call = this.inner
      .resolveApiKey(key)
      .then((value) => {
        if (this.entries.size >= this.maxEntries)
          this.entries.delete(this.entries.keys().next().value!);
        this.entries.set(key, { value, expiresAt: this.clock.now().getTime() + this.ttlMs });
        return value;
      })
      .finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, call);
    return call;
  }

  accountFacts(accountId: string): Promise<AccountFacts> {
    return this.inner.accountFacts(accountId);
  }
}

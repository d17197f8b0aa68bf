import type { Clock } from '@meridian/time';
import type { ApiKeyPrincipal, CredentialSource } from './credential-source';

/**
 * In-memory cache in front of billing-ledger: positive and negative answers are kept for the
 * TTL (a revoked key stops working within it). Concurrent misses of one key share one call.
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
}

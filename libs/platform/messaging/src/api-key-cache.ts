import { createHash } from 'node:crypto';
import { CredentialRevokedSchema, KvBuckets } from '@meridian/contracts';
import { Counter, type Registry } from 'prom-client';
import type { JetStreamConsumers } from './jetstream-consumers';

interface Entry<P> {
  value: P | null;
  expiresAt: number;
  /** A known key is still answered until then while billing-ledger cannot be asked. */
  keepUntil: number;
}

/** How long past its TTL a known key is answered while billing-ledger fails (stale-if-error). */
export const API_KEY_STALE_IF_ERROR_MS = 3_600_000;
/**
 * After a failed lookup a kept key is answered from memory this long before billing-ledger is
 * asked again: a hung billing-ledger costs one call the lookup's timeout, not every call.
 */
export const API_KEY_KEPT_RETRY_MS = 5_000;

interface Pending<P> {
  call: Promise<P | null>;
  /** Set when the key's revocation arrives while billing-ledger is still answering. */
  revoked: boolean;
}

/**
 * API keys resolved by billing-ledger, kept in memory (positive and negative answers, for the
 * TTL; concurrent misses of one key share one call) and evicted at once when billing-ledger
 * publishes the key's revocation (`watch`: the revoked-credentials KV bucket, the same feed the
 * gateway evicts access tokens from). Entries are keyed by the sha256 of the key, as the feed
 * is; the secret itself is never kept. The TTL is only a safety net for a lost feed.
 *
 * A key known before (a positive answer) is still answered `staleIfErrorMs` past its TTL while
 * billing-ledger fails to answer (restarting, unreachable): stale-if-error, as the gateway keeps
 * access tokens (ADR 0213). Unknown keys and failures are never answered from memory.
 */
export class ApiKeyCache<P> {
  private readonly entries = new Map<string, Entry<P>>();
  private readonly inFlight = new Map<string, Pending<P>>();
  private kept: { inc(): void } | undefined;

  constructor(
    private readonly load: (key: string) => Promise<P | null>,
    private readonly now: () => number,
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
    private readonly staleIfErrorMs = API_KEY_STALE_IF_ERROR_MS,
  ) {}

  /**
   * null: unknown, deleted or revoked key. Rejects (uncached) when billing-ledger fails, unless
   * the key was known within `staleIfErrorMs` past its TTL: then that answer.
   */
  get(key: string): Promise<P | null> {
    const hash = sha256Hex(key);
    const hit = this.entries.get(hash);
    if (hit !== undefined && hit.expiresAt > this.now()) return Promise.resolve(hit.value);
    const pending = this.inFlight.get(hash);
    if (pending !== undefined) return pending.call;
    const entry: Pending<P> = { call: undefined!, revoked: false };
    entry.call = this.load(key)
      .then(
        (value) => {
          // An answer given before the revocation landed is stale: neither kept nor believed.
          if (entry.revoked) return null;
          if (this.entries.size >= this.maxEntries && !this.entries.has(hash))
            this.entries.delete(this.entries.keys().next().value!);
          const expiresAt = this.now() + this.ttlMs;
          const keepUntil = value === null ? expiresAt : expiresAt + this.staleIfErrorMs;
          this.entries.set(hash, { value, expiresAt, keepUntil });
          return value;
        },
        (error: unknown) => {
          // Read again: a revocation that landed meanwhile has removed the entry.
          const known = this.entries.get(hash);
          const now = this.now();
          if (known !== undefined && known.value !== null && known.keepUntil > now) {
            known.expiresAt = Math.min(now + API_KEY_KEPT_RETRY_MS, known.keepUntil);
            this.kept?.inc();
            return known.value;
          }
          throw error;
        },
      )
      .finally(() => this.inFlight.delete(hash));
    this.inFlight.set(hash, entry);
    return entry.call;
  }

  /** The key with this sha256 (hex) was deleted or revoked: forget it now. */
  revokeHash(hash: string): void {
    const key = hash.toLowerCase();
    this.entries.delete(key);
    const pending = this.inFlight.get(key);
    if (pending !== undefined) pending.revoked = true;
  }

  /**
   * Mirrors KvBuckets.revokedCredentials (stopped with the app's consumers; not part of
   * `/readyz`, ADR 0212 amendment) and evicts every API key revoked on it.
   */
  watch(consumers: JetStreamConsumers): void {
    consumers.mirror(KvBuckets.revokedCredentials.name, CredentialRevokedSchema, (_key, value) => {
      if (value?.credentialType === 'api_key') this.revokeHash(value.credentialHash);
    });
  }

  /**
   * Counts on `registry` every failed lookup answered from a key known before
   * (`api_key_cache_kept_total`): billing-ledger unreachable while callers are still served.
   */
  count(registry: Registry): this {
    this.kept =
      (registry.getSingleMetric('api_key_cache_kept_total') as Counter | undefined) ??
      new Counter({
        name: 'api_key_cache_kept_total',
        help: 'API key lookups that failed at billing-ledger and were answered from a key known before (stale-if-error)',
        registers: [registry],
      });
    return this;
  }

  get size(): number {
    return this.entries.size;
  }
}

function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

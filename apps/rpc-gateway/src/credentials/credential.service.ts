import type { Logger } from 'pino';
import {
  AccountStates,
  CredentialCache,
  type AccountSnapshot,
  type CredentialSource,
  type ResolvedToken,
} from './credential-cache';

export type Lookup =
  { found: true; token: ResolvedToken } | { found: false } | { unavailable: true };

/**
 * Hot-path credential checks from memory: a token is resolved at billing-ledger once, then
 * served from the cache until revoked (KV feed) or expired. Concurrent first sightings of one
 * token share one resolution.
 */
export class CredentialService {
  private readonly inFlight = new Map<string, Promise<Lookup>>();

  constructor(
    private readonly cache: CredentialCache,
    readonly accounts: AccountStates,
    private readonly source: CredentialSource,
    private readonly logger: Logger,
  ) {}

  /** Synchronous when cached (the common case), so the hot path awaits nothing. */
  lookup(token: string): Lookup | Promise<Lookup> {
    const cached = this.cache.get(token);
    if (cached !== undefined)
      return cached === null ? { found: false } : { found: true, token: cached };
    let pending = this.inFlight.get(token);
    if (pending === undefined) {
      pending = this.resolve(token).finally(() => this.inFlight.delete(token));
      this.inFlight.set(token, pending);
    }
    return pending;
  }

  account(accountId: string): AccountSnapshot | undefined {
    return this.accounts.get(accountId);
  }

  revokeHash(hash: string): void {
    this.cache.revokeHash(hash);
  }

  private async resolve(token: string): Promise<Lookup> {
    try {
      const resolved = await this.source.resolve(token);
      this.cache.put(token, resolved);
      if (resolved?.account) this.accounts.apply(resolved.account);
      return resolved === null ? { found: false } : { found: true, token: resolved };
    } catch (error) {
      this.logger.error({ err: error }, 'credential source unavailable');
      return { unavailable: true };
    }
  }
}

import { DependencyOutageLog } from '@meridian/platform-grpc';
import type { Logger } from 'pino';
import type { SpendEstimate } from './spend-estimate';
import {
  AccountStates,
  CredentialCache,
  type AccountSnapshot,
  type CredentialSource,
  type ResolvedToken,
} from './credential-cache';

/** Revocations remembered for sessions opened around them; the feed replays 24 h on start. */
const MAX_RECENTLY_REVOKED = 100_000;

export type Lookup =
  { found: true; token: ResolvedToken } | { found: false } | { unavailable: true };

const NOT_FOUND: Lookup = { found: false };

/** How long a kept token is served from memory after a failed refresh before the next try. */
export const KEPT_RETRY_MS = 5_000;

/**
 * Hot-path credential checks from memory: a token is resolved at billing-ledger once, then
 * served from the cache until revoked (KV feed) or expired. Concurrent first sightings of one
 * token share one resolution. A known token past its freshness but still kept (stale-if-error)
 * is served at once while it is resolved again in the background: the answer replaces it, a
 * failure keeps serving it (a region cut from the core keeps its known tokens working).
 */
export class CredentialService {
  private readonly inFlight = new Map<string, Promise<Lookup>>();
  private readonly revokedListeners: ((hash: string) => void)[] = [];
  private readonly exhaustedListeners: ((accountId: string) => void)[] = [];
  /** Hashes revoked lately, oldest first: a session opened around a revocation checks here. */
  private readonly recentlyRevoked = new Set<string>();
  /** billing-ledger out of reach: one warn line per cause, one when it answers (QA). */
  private readonly outages: DependencyOutageLog;

  constructor(
    private readonly cache: CredentialCache,
    readonly accounts: AccountStates,
    private readonly source: CredentialSource,
    private readonly logger: Logger,
    /** Called each time a failed refresh leaves a kept token in service. */
    private readonly onKept: () => void = () => undefined,
    now: () => number = Date.now,
  ) {
    this.outages = new DependencyOutageLog(
      logger,
      'billing-ledger',
      'tokens not resolved before answer -32000 "access token check unavailable, retry later" (HTTP 503), tokens resolved before are served',
      now,
    );
  }

  /** Synchronous when cached (the common case), so the hot path awaits nothing. */
  lookup(token: string): Lookup | Promise<Lookup> {
    const fresh = this.cache.get(token);
    if (fresh !== undefined) return fresh === null ? NOT_FOUND : { found: true, token: fresh };
    const kept = this.cache.kept(token);
    const pending = this.resolveOnce(token);
    return kept === undefined ? pending : { found: true, token: kept };
  }

  private resolveOnce(token: string): Promise<Lookup> {
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

  /** This process's estimate of the account's spendable CU (ADR 0201 amendment). */
  estimate(accountId: string): SpendEstimate | undefined {
    return this.accounts.estimate(accountId);
  }

  /**
   * This process's estimate of the account's CU reached zero before billing-ledger's state
   * said so: its open sessions are told as if the state had (their subscriptions end), since
   * every later call of it here is refused alike.
   */
  ranOut(accountId: string): void {
    for (const listener of this.exhaustedListeners) listener(accountId);
  }

  /**
   * A newer state of an account (the balance feed, or a token's resolution); the highest
   * version wins. An account that turns exhausted is told to its open sessions: subscription
   * notifications are not billed, so a feed opened before must not run on unpaid (ADR 0210).
   */
  applyAccount(snapshot: AccountSnapshot): void {
    const before = this.accounts.get(snapshot.accountId)?.status;
    if (!this.accounts.apply(snapshot)) return;
    if (snapshot.status === 'exhausted' && before !== 'exhausted')
      for (const listener of this.exhaustedListeners) listener(snapshot.accountId);
  }

  /**
   * Calls `listener` with every account that turns exhausted from now on, by its state or by
   * this process's estimate (`ranOut`).
   */
  onExhausted(listener: (accountId: string) => void): void {
    this.exhaustedListeners.push(listener);
  }

  /**
   * A credential was rolled, deleted or revoked (sha256 of the secret, from the revocation
   * feed): its cache entry goes, and every open session of it is told (WebSocket, ADR 0210).
   */
  revokeHash(hash: string): void {
    const key = hash.toLowerCase();
    this.cache.revokeHash(key);
    this.recentlyRevoked.delete(key);
    this.recentlyRevoked.add(key);
    if (this.recentlyRevoked.size > MAX_RECENTLY_REVOKED)
      this.recentlyRevoked.delete(this.recentlyRevoked.values().next().value as string);
    for (const listener of this.revokedListeners) listener(key);
  }

  /** Calls `listener` with the hash of every credential revoked from now on. */
  onRevoked(listener: (hash: string) => void): void {
    this.revokedListeners.push(listener);
  }

  /** Whether the credential of this hash was revoked lately (bounded memory). */
  wasRevoked(hash: string): boolean {
    return this.recentlyRevoked.has(hash);
  }

  /** Never rejects: a failure is `unavailable`, or the kept token held for another while. */
  private async resolve(token: string): Promise<Lookup> {
    try {
      const resolved = await this.source.resolve(token);
      this.outages.answered();
      this.cache.put(token, resolved);
      if (resolved?.account) this.applyAccount(resolved.account);
      return resolved === null ? { found: false } : { found: true, token: resolved };
    } catch (error) {
      // The cause once per outage, not a line (with a grpc-js stack) per request.
      this.outages.failed(error);
      if (this.cache.hold(token, KEPT_RETRY_MS)) {
        const held = this.cache.get(token)!;
        this.onKept();
        this.logger.debug(
          { token_id: held.tokenId },
          'credential source unavailable: serving the token resolved before',
        );
        return { found: true, token: held };
      }
      return { unavailable: true };
    }
  }
}

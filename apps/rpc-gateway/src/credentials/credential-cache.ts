import { createHash } from 'node:crypto';
import type { NetworkKey } from '@meridian/networks';
import {
  SpendEstimate,
  UsageWindow,
  type SpendLeaseOptions,
  type SpendPool,
} from './spend-estimate';

export type BalanceStatus = 'ok' | 'exhausted';

/** Plan and balance facts the hot path needs about an account. */
export interface AccountSnapshot {
  readonly accountId: string;
  readonly status: BalanceStatus;
  readonly nodeRps: number;
  /**
   * No plan (a team that has not picked one) and no node of its own (`isPlanRequired`): when
   * such an account cannot spend, the missing plan is why (402 plan_required, not exhausted).
   */
  readonly planRequired?: boolean;
  /**
   * CU the account can spend per this state (`spendableCu` of @meridian/compute-units, from its
   * allowance and purchased CU); undefined when the source does not say (static tokens): no local estimate then.
   */
  readonly spendableCu?: number;
  /** Monotonic per account (billing-ledger); the higher version wins. */
  readonly version: number;
}

export interface ResolvedToken {
  readonly tokenId: string;
  readonly accountId: string;
  readonly network: NetworkKey;
  readonly account?: AccountSnapshot;
}

/** Where unknown tokens are looked up (billing-ledger over gRPC in production). */
export interface CredentialSource {
  /** null: unknown, deleted or revoked token. Throws when the source cannot answer. */
  resolve(token: string): Promise<ResolvedToken | null>;
}

export const CREDENTIAL_SOURCE = Symbol('CREDENTIAL_SOURCE');

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

interface Entry {
  value: ResolvedToken | null;
  /** Served as is until then; after it the token is resolved again. */
  freshUntilMs: number;
  /** A known token past its freshness is still served until then if the source cannot answer. */
  keepUntilMs: number;
  hash: string;
}

export interface CredentialCacheOptions {
  positiveTtlMs: number;
  negativeTtlMs: number;
  /**
   * How long past `positiveTtlMs` a known token is still served while its resolution fails
   * (stale-if-error): a region cut from billing-ledger keeps serving the tokens it knows. 0 = never.
   */
  staleIfErrorMs: number;
  maxEntries: number;
}

/**
 * Token → account/network, in memory. Positive entries are fresh `positiveTtlMs` (a safety net;
 * the revocation feed evicts them at once), unknown tokens `negativeTtlMs` (brief, so a token
 * created a moment ago starts working quickly while a scan of random tokens does not reach
 * billing). A known token stays `staleIfErrorMs` longer, served only while it cannot be resolved
 * again (stale-if-error, ADR 0213).
 */
export class CredentialCache {
  private readonly entries = new Map<string, Entry>();
  private readonly byHash = new Map<string, string>();

  constructor(
    private readonly now: () => number,
    private readonly options: CredentialCacheOptions,
  ) {}

  /**
   * undefined = not cached or past its freshness; null = cached as unknown. Allocates nothing:
   * it is asked on every request (ADR 0207).
   */
  get(token: string): ResolvedToken | null | undefined {
    const entry = this.entries.get(token);
    return entry !== undefined && entry.freshUntilMs > this.now() ? entry.value : undefined;
  }

  /**
   * A known token past its freshness and still kept (stale-if-error); undefined when there is
   * none, and an entry past its keeping is dropped.
   */
  kept(token: string): ResolvedToken | undefined {
    const entry = this.entries.get(token);
    if (entry === undefined) return undefined;
    const now = this.now();
    if (entry.freshUntilMs > now) return undefined;
    if (entry.value !== null && entry.keepUntilMs > now) return entry.value;
    this.delete(token, entry.hash);
    return undefined;
  }

  put(token: string, value: ResolvedToken | null): void {
    if (this.entries.size >= this.options.maxEntries && !this.entries.has(token)) {
      const oldest = this.entries.keys().next().value as string;
      this.delete(oldest, this.entries.get(oldest)!.hash);
    }
    const hash = sha256Hex(token);
    const now = this.now();
    const freshUntilMs =
      now + (value === null ? this.options.negativeTtlMs : this.options.positiveTtlMs);
    const keepUntilMs = value === null ? freshUntilMs : freshUntilMs + this.options.staleIfErrorMs;
    this.entries.set(token, { value, freshUntilMs, keepUntilMs, hash });
    this.byHash.set(hash, token);
  }

  /**
   * A kept token's resolution failed: serve it as fresh for `retryMs` more (not past its
   * keeping), so the calls in between are answered from memory instead of each waiting on a
   * source that is down. False when there is no kept entry to hold.
   */
  hold(token: string, retryMs: number): boolean {
    const entry = this.entries.get(token);
    if (entry === undefined || entry.value === null) return false;
    const now = this.now();
    if (entry.keepUntilMs <= now) return false;
    entry.freshUntilMs = Math.max(entry.freshUntilMs, Math.min(now + retryMs, entry.keepUntilMs));
    return true;
  }

  /** A credential was rolled, deleted or revoked (keyed by sha256 of the secret). */
  revokeHash(hash: string): boolean {
    const token = this.byHash.get(hash.toLowerCase());
    if (token === undefined) return false;
    this.delete(token, hash.toLowerCase());
    return true;
  }

  private delete(token: string, hash: string): void {
    this.entries.delete(token);
    this.byHash.delete(hash);
  }

  get size(): number {
    return this.entries.size;
  }
}

/**
 * Latest balance state and plan RPS per account, fed by the KV bucket and by resolutions, and
 * this process's estimate of each account's spendable CU, reset by every newer state.
 */
export class AccountStates {
  private readonly states = new Map<string, AccountSnapshot>();
  private readonly estimates = new Map<string, SpendEstimate>();

  /**
   * `window`: the usage flush's windows (the gateway cuts it at each drain of its meter);
   * `pool`: the fleet's spend pools, when the estimates are shared (ADR 0201 amendment).
   */
  constructor(
    private readonly window: UsageWindow = new UsageWindow(),
    private readonly pool?: SpendPool,
    private readonly lease?: SpendLeaseOptions,
  ) {}

  get(accountId: string): AccountSnapshot | undefined {
    return this.states.get(accountId);
  }

  /** The account's estimate (one object per account); undefined before its first state. */
  estimate(accountId: string): SpendEstimate | undefined {
    return this.estimates.get(accountId);
  }

  /**
   * Keeps the highest version; returns whether the state changed. The estimate starts again
   * only from a newer version: the same version seen twice (the feed and a resolution) would
   * otherwise give back what was spent since.
   */
  apply(snapshot: AccountSnapshot): boolean {
    const current = this.states.get(snapshot.accountId);
    if (current !== undefined && current.version > snapshot.version) return false;
    this.states.set(snapshot.accountId, snapshot);
    let estimate = this.estimates.get(snapshot.accountId);
    if (estimate === undefined)
      this.estimates.set(
        snapshot.accountId,
        (estimate = new SpendEstimate(this.window, this.pool, snapshot.accountId, this.lease)),
      );
    if (current === undefined || current.version < snapshot.version)
      estimate.reset(snapshot.version, snapshot.spendableCu);
    return true;
  }
}

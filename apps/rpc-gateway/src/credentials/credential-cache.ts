import { createHash } from 'node:crypto';
import type { NetworkKey } from '@meridian/networks';

export type BalanceStatus = 'ok' | 'exhausted';

/** Plan and balance facts the hot path needs about an account. */
export interface AccountSnapshot {
  readonly accountId: string;
  readonly status: BalanceStatus;
  readonly nodeRps: number;
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
  expiresMs: number;
  hash: string;
}

/**
 * Token → account/network, in memory. Positive entries live `positiveTtlMs` (a safety net; the
 * revocation feed evicts them at once), unknown tokens `negativeTtlMs` (brief, so a token created
 * a moment ago starts working quickly while a scan of random tokens does not reach billing).
 */
export class CredentialCache {
  private readonly entries = new Map<string, Entry>();
  private readonly byHash = new Map<string, string>();

  constructor(
    private readonly now: () => number,
    private readonly options: { positiveTtlMs: number; negativeTtlMs: number; maxEntries: number },
  ) {}

  /** undefined = not cached; null = cached as unknown. */
  get(token: string): ResolvedToken | null | undefined {
    const entry = this.entries.get(token);
    if (entry === undefined) return undefined;
    if (entry.expiresMs <= this.now()) {
      this.delete(token, entry.hash);
      return undefined;
    }
    return entry.value;
  }

  put(token: string, value: ResolvedToken | null): void {
    if (this.entries.size >= this.options.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.delete(oldest, this.entries.get(oldest)!.hash);
    }
    const hash = sha256Hex(token);
    const ttl = value === null ? this.options.negativeTtlMs : this.options.positiveTtlMs;
    this.entries.set(token, { value, expiresMs: this.now() + ttl, hash });
    this.byHash.set(hash, token);
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

/** Latest balance state and plan RPS per account, fed by the KV bucket and by resolutions. */
export class AccountStates {
  private readonly states = new Map<string, AccountSnapshot>();

  get(accountId: string): AccountSnapshot | undefined {
    return this.states.get(accountId);
  }

  /** Keeps the highest version; returns whether the state changed. */
  apply(snapshot: AccountSnapshot): boolean {
    const current = this.states.get(snapshot.accountId);
    if (current !== undefined && current.version > snapshot.version) return false;
    this.states.set(snapshot.accountId, snapshot);
    return true;
  }
}

/** What billing-ledger knows about an account, as the webhook rules need it. */
export interface AccountFacts {
  readonly accountId: string;
  /** null: team account without a plan. */
  readonly planId: string | null;
  readonly accountType: 'individual' | 'team';
  readonly nodeOwner: boolean;
  /** Webhook caps resolved by billing (plan, contract overrides, node owners). */
  readonly caps: {
    readonly activeWebhooks: number;
    readonly addressesPerWebhook: number;
    readonly addressesPerAccount: number;
    readonly eventsPerSecond: number;
    readonly eventsBurst: number;
    readonly inlineAddresses: number;
    readonly listRefs: number;
    readonly addressLists: number;
    readonly addressesPerList: number;
  };
  readonly exhausted: boolean;
  readonly exhaustedSince: Date | null;
  /** Remaining allowance and purchased CU (below zero: an overdraft the next top-up pays). */
  readonly allowanceCu: number;
  readonly purchasedCu: number;
  readonly pendingTopUpCu: number;
  /** Billing's per-account version (shared by its events, KV and gRPC answers). */
  readonly version: number;
}

export interface ApiKeyPrincipal {
  readonly keyId: string;
  readonly accountId: string;
  readonly scopes: readonly string[];
}

/** billing-ledger as this app sees it. Production: gRPC (keys cached); the same in tests. */
export interface CredentialSource {
  /** null for an unknown, deleted or revoked key. Throws only when billing is unreachable. */
  resolveApiKey(key: string): Promise<ApiKeyPrincipal | null>;
  /** Fresh facts of one account (no cache: caps and balance decide writes). */
  accountFacts(accountId: string): Promise<AccountFacts>;
}

export const CREDENTIAL_SOURCE = Symbol('CREDENTIAL_SOURCE');

export const WEBHOOKS_SCOPE = 'webhooks';

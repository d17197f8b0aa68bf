/** What an audit request is allowed to do, resolved from its Bearer API key. */
export interface ApiKeyPrincipal {
  readonly keyId: string;
  readonly accountId: string;
  readonly scopes: readonly string[];
  /** Plan id (free, starter, …); null for a team account without a plan. */
  readonly planId: string | null;
  /** Quota resolved by billing (contract overrides); absent → the plan table's audit quota. */
  readonly auditQuota?: { readonly checksPerDay: number; readonly requestsPerSecond: number };
}

/** Resolves API keys. Production: billing-ledger gRPC behind a cache; tests may supply keys. */
export interface CredentialSource {
  /** null for an unknown, deleted or revoked key. Throws only when the source itself is unreachable. */
  resolveApiKey(key: string): Promise<ApiKeyPrincipal | null>;
}

export const CREDENTIAL_SOURCE = Symbol('CREDENTIAL_SOURCE');

export const AUDIT_SCOPE = 'audit';

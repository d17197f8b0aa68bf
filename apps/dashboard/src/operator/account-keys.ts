/**
 * billing-ledger's `GET /admin/accounts/{id}/api-keys` line (its OpenAPI `adminApiKeyResponse`):
 * no secret, no hash.
 */
export interface BillingAccountKey {
  id: string;
  name: string;
  scopes: string[];
  hint: string;
  created_at: string;
  managed: boolean;
  revoked_at: string | null;
}

/** A dashboard user of the account and the key the dashboard holds for them now. */
export interface KeyHolder {
  email: string;
  apiKeyId: string;
}

/** A key as the operator's account page shows it. */
export interface OperatorAccountKey extends BillingAccountKey {
  /**
   * The dashboard signs this user's calls with the key: billing flags it managed, or a user's
   * row holds it (a key made before the flag that the dashboard has not named yet, ADR 0110).
   * Revoking it is renewed at the user's next call (ADR 0110 amendment).
   */
  dashboard_key: boolean;
  /** The user the dashboard holds the key for; null when it does not know (an older key). */
  dashboard_user: string | null;
}

/** Billing's keys with what only the dashboard knows: whose dashboard key each one is. */
export function withKeyHolders(
  keys: readonly BillingAccountKey[],
  holders: readonly KeyHolder[],
): OperatorAccountKey[] {
  const byKey = new Map(holders.map((holder) => [holder.apiKeyId, holder.email]));
  return keys.map((key) => {
    const user = byKey.get(key.id) ?? null;
    return { ...key, dashboard_key: key.managed || user !== null, dashboard_user: user };
  });
}

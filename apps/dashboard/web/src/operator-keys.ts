/** An API key of an account as the operator's account page gets it (BFF `OperatorAccountKey`). */
export interface OperatorKey {
  id: string;
  name: string;
  scopes: string[];
  hint: string;
  created_at: string;
  managed: boolean;
  revoked_at: string | null;
  /** The dashboard signs a user's calls with it (ADR 0110). */
  dashboard_key: boolean;
  /** Whose dashboard key it is, when the dashboard knows. */
  dashboard_user: string | null;
}

/** Who holds the key, as the list says it: the dashboard's key (of whom), or the account's. */
export function keyHolderOf(key: OperatorKey): string {
  if (!key.dashboard_key) return "The account's key";
  return key.dashboard_user ? `Dashboard key of ${key.dashboard_user}` : 'Dashboard key';
}

/**
 * What revoking the key does, said in the confirmation and once it is done: the dashboard's
 * key is renewed at the user's next visit (ADR 0110 amendment), any other key is gone for good.
 */
export function revocationOutcomeOf(key: OperatorKey, done: boolean): string {
  const refused = done
    ? `Key ${key.hint} is revoked: requests with it are refused.`
    : `Requests with key ${key.hint} are refused from now on.`;
  if (!key.dashboard_key) return refused;
  const who = key.dashboard_user ?? 'its user';
  return done
    ? `${refused} The dashboard makes ${who} a new key at their next visit.`
    : `${refused} It is the dashboard's own key: the dashboard makes ${who} a new one at their ` +
        'next visit, so their dashboard keeps working. Revoke it when it leaked.';
}

/**
 * The scopes an API key may carry (billing-ledger `API_KEY_SCOPES`), as the page names them.
 * `plan` is no API of its own: it lets an account key change the plan (ADR 0604 amendment), an
 * owner's action, so the page offers it to owners only (`offeredScopes`).
 */
export const API_KEY_SCOPES = [
  { id: 'webhooks', label: 'Webhooks', description: 'webhooks and address lists' },
  { id: 'account', label: 'Account', description: 'balance, usage, access tokens, top-ups' },
  {
    id: 'plan',
    label: 'Plan',
    description: "changes the account's plan (with Account; owners only)",
  },
  { id: 'audit', label: 'Address Audit', description: 'wallet and token risk checks' },
] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number]['id'];
/** The scopes that each name a REST API (its base URL and example on the page). */
export type ApiScope = Exclude<ApiKeyScope, 'plan'>;
export const API_SCOPES = API_KEY_SCOPES.filter(
  (scope): scope is Extract<(typeof API_KEY_SCOPES)[number], { id: ApiScope }> =>
    scope.id !== 'plan',
);

/** The scopes the page offers the user: `plan` only to an owner (a member's is 403). */
export function offeredScopes(accountRole: 'owner' | 'member' | null | undefined) {
  return API_KEY_SCOPES.filter((scope) => scope.id !== 'plan' || accountRole === 'owner');
}

/** One read-only call per API, to try a key with (each base already ends in its version). */
const EXAMPLE: Record<ApiScope, (base: string) => string> = {
  webhooks: (base) => `curl -s ${base}/webhooks -H "authorization: Bearer <API key>"`,
  account: (base) => `curl -s ${base}/account/balance -H "authorization: Bearer <API key>"`,
  audit: (base) =>
    `curl -s -X POST ${base}/wallet-audit/check -H "authorization: Bearer <API key>" -H 'content-type: application/json' -d '{"network":"ETH","address":"0x000000000000000000000000000000000000dEaD"}'`,
};

export function curlExampleOf(scope: ApiScope, base: string): string {
  return EXAMPLE[scope](base.replace(/\/+$/, ''));
}

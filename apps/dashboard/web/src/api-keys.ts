/** The scopes an API key may carry (billing-ledger `API_KEY_SCOPES`), as the page names them. */
export const API_KEY_SCOPES = [
  { id: 'webhooks', label: 'Webhooks', description: 'webhooks and address lists' },
  { id: 'account', label: 'Account', description: 'balance, usage, access tokens, top-ups' },
  { id: 'audit', label: 'Address Audit', description: 'wallet and token risk checks' },
] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number]['id'];

/** One read-only call per API, to try a key with (each base already ends in its version). */
const EXAMPLE: Record<ApiKeyScope, (base: string) => string> = {
  webhooks: (base) => `curl -s ${base}/webhooks -H "authorization: Bearer <API key>"`,
  account: (base) => `curl -s ${base}/account/balance -H "authorization: Bearer <API key>"`,
  audit: (base) =>
    `curl -s -X POST ${base}/wallet-audit/check -H "authorization: Bearer <API key>" -H 'content-type: application/json' -d '{"network":"ETH","address":"0x000000000000000000000000000000000000dEaD"}'`,
};

export function curlExampleOf(scope: ApiKeyScope, base: string): string {
  return EXAMPLE[scope](base.replace(/\/+$/, ''));
}

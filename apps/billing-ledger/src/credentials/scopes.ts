/**
 * What an API key may call, each scope with its words (the OpenAPI document's and the README's):
 * the account API, the plan change (ADR 0604 amendment "A scope of its own for plan changes"),
 * the webhook API, the audit API. Each app checks only its own scope (webhook-matcher
 * `webhooks`, audit-api `audit`, through gRPC ResolveApiKey); `plan` is billing-ledger's alone.
 */
export const API_KEY_SCOPE_WORDS = {
  account: 'the account API: account, balance, usage, access tokens, top-ups, API keys',
  plan: "changes the account's plan (PUT /account/plan, with account)",
  webhooks: 'the webhook API: webhooks and address lists',
  audit: 'the address audit API',
} as const;

export type ApiKeyScope = keyof typeof API_KEY_SCOPE_WORDS;
export const API_KEY_SCOPES = Object.keys(API_KEY_SCOPE_WORDS) as [ApiKeyScope, ...ApiKeyScope[]];

/** The scopes as the OpenAPI document describes them. */
export const API_KEY_SCOPES_DESCRIPTION = API_KEY_SCOPES.map(
  (scope) => `${scope}: ${API_KEY_SCOPE_WORDS[scope]}`,
).join('; ');

/** What an API key may call: this account API, the webhook API, the audit API. */
export const API_KEY_SCOPES = ['account', 'webhooks', 'audit'] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

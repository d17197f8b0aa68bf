/**
 * Who may call each REST route, one row per route of every REST_APIS process. The matrix test
 * reads the routes from the running processes and fails for a route without a row here (and for
 * a row whose route is gone), so a new route cannot ship without its access rule being stated
 * and tested. Rules (COMPAT, billing-ledger README, audit-api README):
 * - `public`: liveness, readiness, metrics; no credentials.
 * - `account`: an API key with the `account` scope; 401 without one or with a bad one, 403 for a
 *   key without the scope; another account's id answers 404 like an unknown one.
 * - `operator`: the OPERATOR_TOKEN; any API key (even with every scope) is 401.
 * - `audit`, `webhooks`: an API key with that scope; 401 / 403 / 404 as for `account`.
 * - `plan`: an API key with the `account` and `plan` scopes (a plan change, ADR 0604 amendment):
 *   as `account`, and a key with `account` alone is 403 too.
 * `id` names the kind of `:id` in the path (filled with the other account's resource);
 * `body` is a valid body, so a refusal is about credentials and nothing else.
 */
export type Access =
  'public' | 'account' | 'plan' | 'operator' | 'audit' | 'webhooks' | DashboardAccess;

/**
 * The dashboard's access kinds: a session cookie (`mrd_session`) from sign-up or sign-in, and for
 * every state-changing method its CSRF token in `X-CSRF-Token`. 401 without a session or with an
 * unknown one; 403 for the other role's session and for a change without the CSRF token; another
 * customer's id answers 404 (ADR 0601).
 * - `customer_session`, `operator_session`: a signed-in user of that role;
 * - `session`: any signed-in user (sign-out, password change);
 * - `owner_session`: a customer who owns their account (the team's changes, ADR 0604): as
 *   `customer_session`, and a member of the victim's account gets 403.
 */
export type DashboardAccess = 'customer_session' | 'operator_session' | 'owner_session' | 'session';

export interface MatrixRow {
  access: Access;
  id?:
    | 'account'
    | 'api_key'
    | 'access_token'
    | 'webhook'
    | 'address_list'
    | 'dashboard_api_key'
    | 'dashboard_webhook'
    | 'dashboard_member'
    | 'dashboard_team_invitation';
  body?: unknown;
  /** The path to call when the route's own is a wildcard (`:id` filled as in the route's). */
  path?: string;
  /** What a `public` row answers when it works, if not 200. */
  okStatus?: number;
}

const PUBLIC: MatrixRow = { access: 'public' };
const ADDRESS = { network: 'ETH', address: '0x000000000000000000000000000000000000dEaD' };
export const WEBHOOK = {
  name: 'matrix',
  network: 'eth-mainnet',
  trigger_type: 'address_activity',
  addresses: [ADDRESS.address],
  target_url: 'https://hooks.customer-domain.com/meridian',
};

/** The dashboard users the matrix signs in as, besides the stack's operator. */
export const DASHBOARD_USERS = {
  victim: { email: 'matrix-victim@meridian.example', password: 'matrix victim password' },
  other: { email: 'matrix-other@meridian.example', password: 'matrix other password' },
  /** A member of the victim's account (a team invitation's sign-up). */
  member: { email: 'matrix-member@meridian.example', password: 'matrix member password' },
};

/**
 * Every method the dashboard's relay route (`@All('relay/*')`) is registered for: one row each.
 * Its path names the victim's webhook, so another customer's session must get 404 whatever the
 * method (the relay's allow-list refuses the methods it does not know with 404 as well).
 */
const DASHBOARD_RELAY_METHODS = [
  'GET',
  'TRACE',
  'DELETE',
  'OPTIONS',
  'PATCH',
  'PUT',
  'POST',
  'QUERY',
];
const dashboardRelayRows = Object.fromEntries(
  DASHBOARD_RELAY_METHODS.map((method): [string, MatrixRow] => [
    `${method} /api/relay/*`,
    {
      access: 'customer_session',
      id: 'dashboard_webhook',
      path: '/api/relay/webhooks/webhooks/:id',
      // QUERY without a content-type is a malformed request (400) before any session check.
      ...(method === 'PATCH'
        ? { body: { name: 'renamed' } }
        : method === 'QUERY'
          ? { body: {} }
          : {}),
    },
  ]),
);

/**
 * Routes a build makes rather than a developer: the dashboard page's files (named by content
 * hash, one route each). One row, named here, stands for all the routes the pattern matches.
 */
export const BUILT_ROUTES: Record<string, { pattern: RegExp; row: string }> = {
  dashboard: { pattern: /^GET \/assets\/[^/]+$/, row: 'GET /assets/:file' },
};

export const AUTHORIZATION_MATRIX: Record<string, Record<string, MatrixRow>> = {
  'billing-ledger': {
    'GET /healthz': PUBLIC,
    'GET /readyz': PUBLIC,
    'GET /metrics': PUBLIC,
    'GET /openapi.json': PUBLIC,
    'GET /reference': PUBLIC,
    'GET /api/v1/account': { access: 'account' },
    'GET /api/v1/account/balance': { access: 'account' },
    'GET /api/v1/account/usage': { access: 'account' },
    'PUT /api/v1/account/plan': { access: 'plan', body: { plan: 'starter' } },
    'POST /api/v1/api-keys': { access: 'account', body: { name: 'matrix', scopes: ['audit'] } },
    'GET /api/v1/api-keys': { access: 'account' },
    'DELETE /api/v1/api-keys/:id': { access: 'account', id: 'api_key' },
    'POST /api/v1/access-tokens': {
      access: 'account',
      body: { network: 'eth-mainnet', name: 'matrix' },
    },
    'GET /api/v1/access-tokens': { access: 'account' },
    'POST /api/v1/access-tokens/:id/roll': { access: 'account', id: 'access_token' },
    'DELETE /api/v1/access-tokens/:id': { access: 'account', id: 'access_token' },
    'POST /api/v1/top-ups': { access: 'account', body: { cu: 1000 } },
    'GET /api/v1/top-ups': { access: 'account' },
    'POST /api/v1/admin/accounts': {
      access: 'operator',
      body: { name: 'matrix', type: 'individual', plan: 'free' },
    },
    'POST /api/v1/admin/accounts/bulk': {
      access: 'operator',
      body: { accounts: [{ name: 'matrix bulk', type: 'individual', plan: 'free' }] },
    },
    'GET /api/v1/admin/accounts': { access: 'operator' },
    'GET /api/v1/admin/accounts/:id': { access: 'operator', id: 'account' },
    'GET /api/v1/admin/accounts/:id/usage': { access: 'operator', id: 'account' },
    'GET /api/v1/admin/accounts/:id/top-ups': { access: 'operator', id: 'account' },
    'PUT /api/v1/admin/accounts/:id/plan': {
      access: 'operator',
      id: 'account',
      body: { plan: 'growth' },
    },
    'POST /api/v1/admin/accounts/:id/top-ups': {
      access: 'operator',
      id: 'account',
      body: { cu: 1000 },
    },
    'POST /api/v1/admin/accounts/managed-keys': {
      access: 'operator',
      body: { api_key_ids: ['key_000000000000000000000000'] },
    },
    'GET /api/v1/admin/accounts/:id/api-keys': { access: 'operator', id: 'account' },
    'POST /api/v1/admin/accounts/:id/api-keys': {
      access: 'operator',
      id: 'account',
      body: { name: 'matrix', scopes: ['audit'] },
    },
    'POST /api/v1/admin/accounts/:id/api-keys/revoke-created-by': {
      access: 'operator',
      id: 'account',
      body: { created_by: 'usr_matrix' },
    },
    'DELETE /api/v1/admin/accounts/:id/api-keys/:keyId': {
      access: 'operator',
      id: 'account',
      path: '/api/v1/admin/accounts/:id/api-keys/key_000000000000000000000000',
    },
  },
  'audit-api': {
    'GET /healthz': PUBLIC,
    'GET /readyz': PUBLIC,
    'GET /metrics': PUBLIC,
    'GET /openapi.json': PUBLIC,
    'GET /reference': PUBLIC,
    'POST /v1/wallet-audit/check': { access: 'audit', body: ADDRESS },
    'POST /v1/wallet-audit/audit': { access: 'audit', body: ADDRESS },
    'GET /v1/quota': { access: 'audit' },
    'POST /v1/rug-pull/check': {
      access: 'audit',
      body: { network: 'ETH', contract_address: ADDRESS.address },
    },
  },
  'webhook-matcher': {
    'GET /healthz': PUBLIC,
    'GET /readyz': PUBLIC,
    'GET /metrics': PUBLIC,
    'GET /openapi.json': PUBLIC,
    'GET /reference': PUBLIC,
    'GET /api/v1/webhooks/limits': { access: 'webhooks' },
    'GET /api/v1/admin/accounts/:id/webhooks': { access: 'operator', id: 'account' },
    'GET /api/v1/admin/accounts/:id/webhooks/:webhookId/deliveries': {
      access: 'operator',
      id: 'account',
      path: '/api/v1/admin/accounts/:id/webhooks/wh_aaaaaaaaaaaaaaaaaaaaaaaa/deliveries',
    },
    'POST /api/v1/webhooks': { access: 'webhooks', body: WEBHOOK },
    'GET /api/v1/webhooks': { access: 'webhooks' },
    'GET /api/v1/webhooks/:id': { access: 'webhooks', id: 'webhook' },
    'PATCH /api/v1/webhooks/:id': { access: 'webhooks', id: 'webhook', body: { name: 'renamed' } },
    'DELETE /api/v1/webhooks/:id': { access: 'webhooks', id: 'webhook' },
    'POST /api/v1/webhooks/:id/pause': { access: 'webhooks', id: 'webhook' },
    'POST /api/v1/webhooks/:id/resume': { access: 'webhooks', id: 'webhook' },
    'POST /api/v1/webhooks/:id/secret/rotate': { access: 'webhooks', id: 'webhook' },
    'POST /api/v1/webhooks/:id/test': { access: 'webhooks', id: 'webhook' },
    'GET /api/v1/webhooks/:id/deliveries': { access: 'webhooks', id: 'webhook' },
    'GET /api/v1/webhooks/:id/stats': { access: 'webhooks', id: 'webhook' },
    'POST /api/v1/webhooks/:id/deliveries/:eventId/replay': { access: 'webhooks', id: 'webhook' },
    'POST /api/v1/webhooks/:id/replay': {
      access: 'webhooks',
      id: 'webhook',
      body: { from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' },
    },
    'POST /api/v1/address-lists': { access: 'webhooks', body: { name: 'matrix list' } },
    'GET /api/v1/address-lists': { access: 'webhooks' },
    'GET /api/v1/address-lists/:id': { access: 'webhooks', id: 'address_list' },
    'PATCH /api/v1/address-lists/:id': {
      access: 'webhooks',
      id: 'address_list',
      body: { name: 'renamed' },
    },
    'DELETE /api/v1/address-lists/:id': { access: 'webhooks', id: 'address_list' },
    'GET /api/v1/address-lists/:id/entries': { access: 'webhooks', id: 'address_list' },
    'POST /api/v1/address-lists/:id/entries': {
      access: 'webhooks',
      id: 'address_list',
      body: { addresses: [ADDRESS.address] },
    },
    'PUT /api/v1/address-lists/:id/entries': {
      access: 'webhooks',
      id: 'address_list',
      body: { addresses: [ADDRESS.address] },
    },
    'POST /api/v1/address-lists/:id/entries/remove': {
      access: 'webhooks',
      id: 'address_list',
      body: { addresses: [ADDRESS.address] },
    },
  },
  dashboard: {
    'GET /healthz': PUBLIC,
    'GET /readyz': PUBLIC,
    'GET /metrics': PUBLIC,
    // The page: its files and index.html for every client-side route.
    'GET /*': PUBLIC,
    'GET /index.html': PUBLIC,
    'GET /assets/:file': PUBLIC,
    'GET /api/auth/session': PUBLIC,
    // A link's state before a sign-up; no credentials. An unknown code answers 404.
    'GET /api/auth/invitations/:code': {
      access: 'public',
      path: '/api/auth/invitations/not-an-invitation-code',
      okStatus: 404,
    },
    'POST /api/auth/sign-up': {
      access: 'public',
      okStatus: 201,
      body: { email: 'matrix-sign-up@meridian.example', password: 'matrix sign-up password' },
    },
    'POST /api/auth/sign-in': { access: 'public', body: DASHBOARD_USERS.other },
    'POST /api/auth/sign-out': { access: 'session' },
    'POST /api/auth/password': {
      access: 'session',
      body: { current_password: 'not the password', new_password: 'matrix new password' },
    },
    'GET /api/networks': { access: 'customer_session' },
    'GET /api/api-keys': { access: 'customer_session' },
    'POST /api/api-keys': {
      access: 'customer_session',
      body: { name: 'matrix', scopes: ['audit'] },
    },
    'DELETE /api/api-keys/:id': { access: 'customer_session', id: 'dashboard_api_key' },
    ...dashboardRelayRows,
    // Teams (ADR 0604): any user of the account reads and leaves; only an owner changes.
    'GET /api/team': { access: 'customer_session' },
    'POST /api/team/invitations': {
      access: 'owner_session',
      body: { email: 'matrix-invitee@meridian.example' },
    },
    'DELETE /api/team/invitations/:id': {
      access: 'owner_session',
      id: 'dashboard_team_invitation',
    },
    'DELETE /api/team/members/:id': { access: 'owner_session', id: 'dashboard_member' },
    'PATCH /api/team/members/:id': {
      access: 'owner_session',
      id: 'dashboard_member',
      body: { role: 'owner' },
    },
    // Leaving is the user's own (no id): any customer of an account, never the operator.
    'POST /api/team/leave': { access: 'customer_session' },
    // The operator token, not a session: the operator may be the one locked out (ADR 0601).
    'POST /api/admin/sign-in-locks/clear': {
      access: 'operator',
      body: { email: 'matrix-nobody@meridian.example' },
    },
    'GET /api/operator/accounts': { access: 'operator_session' },
    'GET /api/operator/accounts/:id': { access: 'operator_session', id: 'account' },
    'GET /api/operator/accounts/:id/api-keys': { access: 'operator_session', id: 'account' },
    'GET /api/operator/accounts/:id/webhooks': { access: 'operator_session', id: 'account' },
    'GET /api/operator/accounts/:id/webhooks/:webhookId/deliveries': {
      access: 'operator_session',
      id: 'account',
      path: '/api/operator/accounts/:id/webhooks/wh_aaaaaaaaaaaaaaaaaaaaaaaa/deliveries',
    },
    'DELETE /api/operator/accounts/:id/api-keys/:keyId': {
      access: 'operator_session',
      id: 'account',
      path: '/api/operator/accounts/:id/api-keys/key_000000000000000000000000',
    },
    'PUT /api/operator/accounts/:id/plan': {
      access: 'operator_session',
      id: 'account',
      body: { plan: 'growth' },
    },
    'POST /api/operator/accounts/:id/top-ups': {
      access: 'operator_session',
      id: 'account',
      body: { cu: 1000 },
    },
    'GET /api/operator/settings': { access: 'operator_session' },
    'PUT /api/operator/settings': { access: 'operator_session', body: { signup_mode: 'invite' } },
    'POST /api/operator/invitations': {
      access: 'operator_session',
      body: { email: 'matrix-invited@meridian.example' },
    },
    'GET /api/operator/invitations': { access: 'operator_session' },
    'DELETE /api/operator/invitations/:id': {
      access: 'operator_session',
      path: '/api/operator/invitations/inv_000000000000000000000000',
    },
  },
};

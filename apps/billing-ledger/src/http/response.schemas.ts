import { PLAN_IDS } from '@meridian/plans';
import { NETWORK_KEYS } from '@meridian/networks';
import { z } from 'zod';
import { apiKeyScope } from './schemas';

/**
 * The success answers of the REST API as zod, for `/openapi.json` (ADR 0602): the shapes the
 * views in `views.ts` build. Strict, so a view that grows a field without its schema fails the
 * integration tests that parse real answers with these.
 */
const iso = z.iso.datetime();
const cu = z.number().int().describe('compute units');
const count = z.number().int().min(0);

const pageOf = <T extends z.ZodType>(item: T) =>
  z.strictObject({
    items: z.array(item),
    next_cursor: z.string().nullable().describe('pass as cursor for the next page'),
  });

export const balanceResponse = z.strictObject({
  state: z.enum(['ok', 'exhausted']),
  exhausted_since: iso.nullable(),
  allowance_cu: cu,
  allowance_total_cu: cu,
  allowance_resets_at: iso.nullable(),
  purchased_cu: count.describe('compute units bought and not yet spent; never below zero'),
  overdraft_cu: count.describe(
    'compute units that usage in flight spent past zero: a debt the next top-up pays first',
  ),
  pending_top_up_cu: cu,
  pending_top_ups: z.array(z.strictObject({ id: z.string(), cu, clears_at: iso })),
  total_cu: cu.describe('allowance + purchased: spendable now'),
  version: z.number().int(),
});

export const accountResponse = z.strictObject({
  id: z.string(),
  name: z.string(),
  type: z.enum(['individual', 'team']),
  plan: z.enum(PLAN_IDS).nullable(),
  plan_required: z.boolean(),
  node_owner: z.boolean(),
  /** Whether the account may top up and change its plan itself (`SELF_SERVICE_BILLING`). */
  self_service_billing: z.boolean(),
  plan_started_at: iso,
  created_at: iso,
  caps: z.strictObject({
    node_rps: count,
    access_tokens: count,
    allowance_cu: cu,
    webhooks: z.strictObject({
      active_webhooks: count,
      addresses_per_webhook: count,
      addresses_per_account: count,
      events_per_second: count,
      events_burst: count,
      inline_addresses: count,
      list_refs: count,
      address_lists: count,
      addresses_per_list: count,
    }),
    audit: z.strictObject({ checks_per_day: count, requests_per_second: count }),
  }),
  balance: balanceResponse,
});

export const usageResponse = z.strictObject({
  from: iso.describe('start of the first hour counted (from, snapped down to its hour)'),
  to: iso.describe('start of the first hour not counted (to, snapped up to an hour start)'),
  group_by: z.enum(['day', 'network', 'method', 'day_network']),
  items: z.array(
    z.strictObject({
      day: z.string().optional().describe('YYYY-MM-DD (UTC); group_by day, day_network'),
      network: z.string().optional().describe('group_by network, method, day_network'),
      method: z.string().optional().describe('group_by method'),
      calls: count,
      cu,
    }),
  ),
  total_cu: cu,
  total_calls: count,
});

const apiKey = {
  id: z.string(),
  name: z.string(),
  scopes: z.array(apiKeyScope),
  hint: z.string(),
  created_at: iso,
  created_by: z
    .string()
    .nullable()
    .describe(
      'who made the key, as the dashboard names its user (inherited from the key that made it); ' +
        'null: made outside the dashboard',
    ),
};
export const apiKeyResponse = z.strictObject(apiKey);
export const createdApiKeyResponse = z.strictObject({
  ...apiKey,
  key: z.string().describe('the secret (mrd_…), shown only here'),
});

const accessToken = {
  id: z.string(),
  network: z.enum(NETWORK_KEYS),
  name: z.string(),
  hint: z.string(),
  created_at: iso,
};
export const accessTokenResponse = z.strictObject(accessToken);
export const createdAccessTokenResponse = z.strictObject({
  ...accessToken,
  token: z.string().describe('the secret (40 hex chars), shown only here'),
});

export const topUpResponse = z.strictObject({
  id: z.string(),
  cu,
  source: z.enum(['account', 'operator']),
  status: z.enum(['pending', 'cleared']),
  created_at: iso,
  clears_at: iso,
  cleared_at: iso.nullable(),
  api_key_id: z
    .string()
    .nullable()
    .describe("the API key an account's top-up was made with; null: the operator's or older"),
  created_by: z
    .string()
    .nullable()
    .describe(
      "who bought it (the dashboard's user id): named by a managed key or the key's own maker; " +
        'null: the operator, a key of no person, or a top-up from before',
    ),
});

export const apiKeysPage = pageOf(apiKeyResponse);
export const accessTokensPage = pageOf(accessTokenResponse);
export const topUpsPage = pageOf(topUpResponse);

export const createdAccountResponse = z.strictObject({
  account: accountResponse,
  api_key: createdApiKeyResponse,
});
export const createdAccountsResponse = z.strictObject({ items: z.array(createdAccountResponse) });

/** `POST /admin/accounts/managed-keys`: how many of the named keys were not flagged before. */
export const managedKeysResponse = z.strictObject({ flagged: z.number().int() });

/** `POST /admin/accounts/{id}/api-keys/revoke-created-by`: the keys it revoked. */
export const revokedApiKeysResponse = z.strictObject({
  revoked: z.array(z.string()).describe('ids of the keys revoked, those made by them included'),
});

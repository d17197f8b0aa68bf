import type { ContractOverrides } from '@meridian/plans';
import { PLAN_IDS } from '@meridian/plans';
import { NETWORK_KEYS } from '@meridian/networks';
import { z } from 'zod';
import { API_KEY_SCOPES, API_KEY_SCOPES_DESCRIPTION } from '../credentials/scopes';

/**
 * A non-negative integer CU count. `.int()` alone bounds it to safe integers: a second `max` at
 * the same bound said the same sentence twice for 1e300 (QA).
 */
const count = z.number().int().min(0);

export const listQuery = z
  .object({
    limit: z.coerce.number().max(200, { abort: true }).int().min(1).default(50),
    cursor: z
      .string()
      .regex(/^\d{1,19}$/, 'cursor from next_cursor')
      .optional(),
  })
  .strict();

/**
 * Earliest and latest instant a usage bound may name. Bounds snap to whole hours
 * (`usageWindowOf`) and go to Postgres, which has no year 0 and reads no year 10000: the latest
 * is the last hour start of year 9999, so even `to` rounded up stays in it (QA: a 500).
 */
export const USAGE_BOUND_MIN = '1970-01-01T00:00:00Z';
export const USAGE_BOUND_MAX = '9999-12-31T23:00:00Z';

/**
 * One usage bound: an ISO 8601 time with an offset, from USAGE_BOUND_MIN to USAGE_BOUND_MAX. Not
 * a time at all stops there (`abort`): one message, not the range's second one (QA).
 */
const usageBound = z.iso.datetime({ offset: true, abort: true }).refine(
  (value) => {
    const ms = new Date(value).getTime();
    return ms >= Date.parse(USAGE_BOUND_MIN) && ms <= Date.parse(USAGE_BOUND_MAX);
  },
  { message: `a time from ${USAGE_BOUND_MIN} to ${USAGE_BOUND_MAX}` },
);

/** The usage read of the account API and the operator API (and the dashboard, which relays). */
export const usageQuery = z
  .object({
    from: usageBound.optional(),
    to: usageBound.optional(),
    /** `day_network`: one line per day and network (a stacked chart's data). */
    group_by: z.enum(['day', 'network', 'method', 'day_network']).default('day'),
  })
  .strict();

/** One API key scope, each named with its words in the OpenAPI document. */
export const apiKeyScope = z.enum(API_KEY_SCOPES).describe(API_KEY_SCOPES_DESCRIPTION);

/** An opaque label of who made an API key, as the operator's side names them. */
export const CREATED_BY = z.string().trim().min(1).max(100);

export const createApiKeyBody = z
  .object({
    name: z.string().trim().min(1).max(100).default('api key'),
    scopes: z
      .array(apiKeyScope)
      .min(1)
      .describe("a subset of the calling key's own scopes (403 scope_not_held otherwise)"),
    created_by: CREATED_BY.optional().describe(
      "who made the key (the dashboard's user id); only a managed key (the dashboard's) names " +
        "one, any other key's keys inherit its own (403 created_by_not_allowed)",
    ),
  })
  .strict();

export const createAccessTokenBody = z
  .object({
    network: z.enum(NETWORK_KEYS),
    name: z.string().trim().min(1).max(100).optional(),
  })
  .strict();

/** Largest single top-up: far above any plan, far below 2^53. */
export const MAX_TOP_UP_CU = 1_000_000_000_000;

/** `max` first and final: 1e300 is refused once, with the top-up's bound (QA: twice before). */
export const topUpBody = z
  .object({ cu: z.number().max(MAX_TOP_UP_CU, { abort: true }).int().min(1) })
  .strict();

/** The account's top-up: the operator's takes no `created_by` (it is no person of the account). */
export const accountTopUpBody = topUpBody
  .extend({
    created_by: CREATED_BY.optional().describe(
      "who buys it (the dashboard's user id); only a managed key (the dashboard's) names one, " +
        "any other key's top-ups carry its own maker (403 created_by_not_allowed)",
    ),
  })
  .strict();

export const accountPlanBody = z.object({ plan: z.enum(PLAN_IDS) }).strict();

/** Enterprise contract numbers (snake_case like the rest of the API). */
export const contractBody = z
  .object({
    allowance_cu: count,
    node_rps: count,
    access_tokens: count,
    active_webhooks: count,
    addresses_per_webhook: count,
    addresses_per_account: count,
    events_per_second: count,
    events_burst: count,
    audit_checks_per_day: count,
    audit_requests_per_second: count,
  })
  .partial()
  .strict();

export function contractOf(
  body: z.output<typeof contractBody> | undefined | null,
): ContractOverrides | null {
  if (!body) return null;
  const webhooks = Object.fromEntries(
    Object.entries({
      activeWebhooks: body.active_webhooks,
      addressesPerWebhook: body.addresses_per_webhook,
      addressesPerAccount: body.addresses_per_account,
      eventsPerSecond: body.events_per_second,
      eventsBurst: body.events_burst,
    }).filter(([, v]) => v !== undefined),
  );
  const audit = Object.fromEntries(
    Object.entries({
      checksPerDay: body.audit_checks_per_day,
      requestsPerSecond: body.audit_requests_per_second,
    }).filter(([, v]) => v !== undefined),
  );
  return {
    ...(body.allowance_cu !== undefined ? { allowanceCu: body.allowance_cu } : {}),
    ...(body.node_rps !== undefined ? { nodeRps: body.node_rps } : {}),
    ...(body.access_tokens !== undefined ? { accessTokens: body.access_tokens } : {}),
    ...(Object.keys(webhooks).length ? { webhooks } : {}),
    ...(Object.keys(audit).length ? { audit } : {}),
  };
}

const accountType = z.enum(['individual', 'team']);

/**
 * The one rule of an account's plan by its type, on both operator routes that set one: an
 * individual account always has a plan; a team may have none until the operator sets one.
 */
const individualHasPlan = (b: { type: string; plan?: string | null }) =>
  !(b.type === 'individual' && b.plan === null);
const INDIVIDUAL_HAS_PLAN = { message: 'an individual account needs a plan', path: ['plan'] };

/**
 * `PUT /admin/accounts/{id}/plan` checks its plan with the account's type through this, so it
 * answers what `POST /admin/accounts` answers (400 malformed_body, `body.plan: …`).
 */
export const planOfAccountType = z
  .object({ type: accountType, plan: z.enum(PLAN_IDS).nullable() })
  .refine(individualHasPlan, INDIVIDUAL_HAS_PLAN);

export const adminCreateAccountBody = z
  .object({
    name: z.string().trim().min(1).max(200),
    type: accountType.default('individual'),
    /** Omitted: Free for an individual, none for a team. null: none (teams only). */
    plan: z.enum(PLAN_IDS).nullable().optional(),
    node_owner: z.boolean().default(false),
    contract: contractBody.optional(),
    api_key_scopes: z
      .array(apiKeyScope)
      .min(1)
      .default([...API_KEY_SCOPES]),
    /**
     * The first key is held by the operator's side (the dashboard's own key): the account API
     * neither lists it nor deletes it (403 managed_key); the operator API revokes it.
     */
    api_key_managed: z.boolean().default(false),
  })
  .strict()
  .refine(individualHasPlan, INDIVIDUAL_HAS_PLAN);

/** Most accounts one bulk request may create (one transaction). */
export const MAX_BULK_ACCOUNTS = 500;

export const adminBulkCreateAccountsBody = z
  .object({ accounts: z.array(adminCreateAccountBody).min(1).max(MAX_BULK_ACCOUNTS) })
  .strict();

/** Most keys one `POST /admin/accounts/managed-keys` may flag. */
export const MAX_MANAGED_KEYS = 500;

/**
 * Keys the operator's side holds, made before `api_key_managed` existed: the dashboard names
 * the keys of its users (billing cannot tell them from an operator's first key).
 */
export const adminManagedKeysBody = z
  .object({
    api_key_ids: z
      .array(z.string().regex(/^key_[0-9a-f]{24}$/, 'an API key id'))
      .min(1)
      .max(MAX_MANAGED_KEYS),
  })
  .strict();

/**
 * `POST /admin/accounts/{id}/api-keys`: a key the operator makes for an account (shown once):
 * every scope unless named; `managed`: held by the operator's side, as `api_key_managed` (the
 * dashboard's replacement for a key the operator revoked, ADR 0110 amendment).
 */
export const adminCreateApiKeyBody = z
  .object({
    name: z.string().trim().min(1).max(100).default('api key'),
    scopes: z
      .array(apiKeyScope)
      .min(1)
      .default([...API_KEY_SCOPES]),
    managed: z.boolean().default(false),
  })
  .strict();

/** `POST /admin/accounts/{id}/api-keys/revoke-created-by`: whose keys. */
export const revokeCreatedByBody = z.object({ created_by: CREATED_BY }).strict();

export const adminPlanBody = z
  .object({
    plan: z.enum(PLAN_IDS).nullable(),
    contract: contractBody.optional(),
  })
  .strict();

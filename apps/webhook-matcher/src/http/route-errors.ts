import { INVALID_IDEMPOTENCY_KEY } from '@meridian/platform-http';
import { CAP_CODES } from '@meridian/plans';
import { MAX_PREVIOUS_SECRETS } from '@meridian/webhooks';
import type { ApiResponseSpec } from '@meridian/platform-http/openapi';
import { z } from 'zod';
import {
  DEFAULT_TEST_DELIVERY_LIMITS,
  testDeliveryLimits,
  testDeliveryLimitsDescription,
} from '../webhooks/test-delivery-limits';
import { isoTime } from './response-shapes';

/**
 * Error answers the routes declare in `/openapi.json` (`@ApiRoute` responses), beside `default`,
 * as billing-ledger's `ROUTE_ERRORS` do: every status a route may answer, each naming its codes
 * (QA: a client generated from the document tells them apart). A status whose codes carry
 * members of their own (`cap`, `limit`, `requested` of a cap_…) gets the error body with them as
 * its schema. The API-key guard's 401, 403 and 503 go with every `api-key` route (`apiKeyRoute`).
 */
const errorBody = (extras: z.ZodRawShape = {}) =>
  z.looseObject({
    error: z.string().describe('stable error code'),
    message: z.string().optional(),
    request_id: z.string(),
    location: z
      .enum(['body', 'query', 'headers'])
      .optional()
      .describe('the part of the request refused, with `path`'),
    path: z
      .string()
      .optional()
      .describe(
        'the field, JSON path or header refused, when one is, with the part in front ' +
          '(`body.confirm_depth`, `body.filters.any[0]`, `query.limit`, `headers.if-match`, or ' +
          'the part alone: `query`)',
      ),
    ...extras,
  });

const error = (description: string, extras?: z.ZodRawShape): ApiResponseSpec => ({
  description,
  schema: errorBody(extras),
});

const CAPS = Object.values(CAP_CODES).join(', ');

const capMembers = {
  cap: z.string().optional().describe('cap_…: the cap, as GET /webhooks/limits names it'),
  limit: z.number().int().optional().describe('cap_…: the plan limit'),
  requested: z.number().int().optional().describe('cap_…: what the request would make it'),
};

const WEBHOOK_BODY_CODES =
  'malformed_body (the body does not fit; unknown field), invalid_address, ' +
  'invalid_address_checksum (`expected`), invalid_list_ref, duplicate_list_ref (`list_id`), ' +
  'unknown_address_list (`list_id`), invalid_filter, invalid_topic, invalid_tx_hash, ' +
  'filter_too_deep, filter_too_large, filter_required, tx_hash_required, target_url_invalid, ' +
  'target_url_too_long, target_url_not_https, target_url_userinfo, target_url_fragment, ' +
  'target_url_private_address, target_url_reserved_name';

const notFoundWebhook = error('not_found: no webhook of the account with this id');
const notFoundList = error('not_found: no address list of the account with this id');
const invalidListId = 'invalid_id: the id is not al_ and 24 base32 characters';
const QUERY_CODES =
  'invalid_query: a query parameter does not fit (an unknown one, limit not 1 to 200); ' +
  'invalid_cursor: cursor is not a next_cursor of this list';
const ENTRIES_BODY_CODES =
  'malformed_body: the body does not fit (addresses, an unknown field); invalid_address, ' +
  'invalid_address_checksum (`expected`): an address refused (`path` names the first)';
const LIST_CAPS = [
  CAP_CODES.addressesPerList,
  CAP_CODES.addressLists,
  CAP_CODES.addressesPerWebhook,
  CAP_CODES.addressesPerAccount,
].join(', ');

/**
 * The API-key guard's answers (auth/api-key.guard.ts), merged into a route's own errors: 401
 * unauthorized, 403 insufficient_scope (beside the route's own 403), 503 credentials_unavailable
 * and, where the route reads the account's plan from billing-ledger, billing_unavailable. (The
 * 400 invalid_query of a route that declares no query is the platform document's.)
 */
function apiKeyRoute<E extends Record<number, ApiResponseSpec>>(
  errors: E,
  { readsPlan = false } = {},
): E & Record<401 | 403 | 503, ApiResponseSpec> {
  const own403 = (errors as Record<number, ApiResponseSpec>)[403];
  return {
    ...errors,
    401: error('unauthorized: no Authorization: Bearer <API key>, or an unknown or revoked key'),
    403: {
      ...own403,
      description:
        'insufficient_scope: the API key has no webhooks scope' +
        (own403 ? `; ${own403.description}` : ''),
      schema: own403?.schema ?? errorBody(),
    },
    503: error(
      'credentials_unavailable: API keys cannot be checked right now' +
        (readsPlan
          ? '; billing_unavailable: the account state (plan, balance) cannot be read right now'
          : '') +
        '; header Retry-After (s)',
    ),
  };
}
const invalidWebhookId = 'invalid_id: the id is not wh_ and 24 base32 characters';
const INVALID_IF_MATCH =
  'invalid_if_match: the If-Match header is not `*` or a list of entity-tags';
/**
 * PATCH, DELETE, pause and resume with an If-Match naming other versions (http/if-match.ts,
 * ADR 0404).
 */
const versionMismatch = error(
  "version_mismatch: the If-Match header names none of the webhook's current version",
  {
    details: z
      .object({ currentVersion: z.number().int().describe('the version the webhook is at') })
      .optional(),
  },
);
const planRequired = 'plan_required: a team account without a plan';

const OWN_ERRORS = {
  createWebhook: {
    400: error(
      `${WEBHOOK_BODY_CODES}; unsupported_network, invalid_chain, network_not_indexed ` +
        '(`networks`: the networks served); ' +
        INVALID_IDEMPOTENCY_KEY,
      {
        expected: z.string().optional(),
        list_id: z.string().optional(),
        networks: z.array(z.string()).optional(),
      },
    ),
    403: error(planRequired),
    409: error(
      `${CAPS}: a plan limit (\`cap\`, \`limit\`, \`requested\`); ` +
        'idempotency_key_reused: the Idempotency-Key was used with another request, or its ' +
        'webhook was deleted',
      capMembers,
    ),
  },
  patchWebhook: {
    400: error(
      `${invalidWebhookId}; immutable_field: chain, network or trigger_type changed; ` +
        `network_not_indexed; ${WEBHOOK_BODY_CODES}; ${INVALID_IF_MATCH}`,
      {
        expected: z.string().optional(),
        list_id: z.string().optional(),
        networks: z.array(z.string()).optional(),
      },
    ),
    403: error(`${planRequired}, for a filter change a cap would refuse`),
    404: notFoundWebhook,
    409: error(`${CAPS}: a plan limit (\`cap\`, \`limit\`, \`requested\`)`, capMembers),
    412: versionMismatch,
  },
  webhookById: { 400: error(invalidWebhookId), 404: notFoundWebhook },
  deleteWebhook: {
    400: error(`${invalidWebhookId}; ${INVALID_IF_MATCH}`),
    404: notFoundWebhook,
    412: versionMismatch,
  },
  ownerAction: {
    400: error(
      `${invalidWebhookId}; malformed_body: a body that is not empty; ${INVALID_IF_MATCH}`,
    ),
    404: notFoundWebhook,
    412: versionMismatch,
  },
  resume: {
    400: error(
      `${invalidWebhookId}; malformed_body: a body that is not empty; ${INVALID_IF_MATCH}`,
    ),
    403: error(planRequired),
    404: notFoundWebhook,
    412: versionMismatch,
    409: error(
      `insufficient_balance: the CU balance is empty; ${CAPS}: resuming would go past a plan ` +
        'limit (`cap`, `limit`, `requested`)',
      capMembers,
    ),
  },
  rotate: {
    400: error(`${invalidWebhookId}; malformed_body: the body does not fit`),
    404: notFoundWebhook,
    409: error(
      `too_many_previous_secrets: ${MAX_PREVIOUS_SECRETS} previous secrets still sign; rotate ` +
        'after `next_rotation_at`, or with expire_previous: true',
      {
        previous_secrets_expire_at: z
          .array(isoTime)
          .optional()
          .describe('too_many_previous_secrets: until when each previous secret signs'),
        next_rotation_at: isoTime
          .optional()
          .describe('too_many_previous_secrets: when a rotation is taken again'),
      },
    ),
  },
  testDelivery: {
    400: error(`${invalidWebhookId}; malformed_body: a body that is not empty`),
    404: notFoundWebhook,
    409: error('webhook_not_active: sent only while the webhook is active'),
    // The defaults; the served /openapi.json states the configured limits (matcherOpenApi).
    429: error(testDeliveryLimitsDescription(testDeliveryLimits(DEFAULT_TEST_DELIVERY_LIMITS)), {
      scope: z.enum(['webhook', 'account']).optional().describe('the limit reached'),
      limit: z.number().int().optional().describe('test deliveries allowed in the window'),
      window_seconds: z.number().int().optional().describe('the window, in seconds'),
    }),
  },
  replayOne: {
    400: error(
      `${invalidWebhookId}; invalid_id: the event id is not ev_ and 32 hex or test_ and 24 hex; ` +
        'malformed_body: a body that is not empty',
    ),
    404: error(
      'not_found: no webhook of the account with this id, or no given-up delivery of this event',
    ),
    409: error('webhook_not_active: replays are sent only while the webhook is active'),
  },
  replayRange: {
    400: error(`${invalidWebhookId}; malformed_body: from and to do not fit`),
    404: notFoundWebhook,
    409: error('webhook_not_active: replays are sent only while the webhook is active'),
  },
  deleteList: {
    400: error('invalid_id: the id is not al_ and 24 base32 characters'),
    404: error('not_found: no address list of the account with this id'),
    409: error('list_in_use: webhooks reference the list (`webhook_ids`, the first 50)', {
      webhook_ids: z.array(z.string()).optional(),
    }),
  },
  listQuery: { 400: error(QUERY_CODES) },
  deliveries: {
    400: error(
      `${invalidWebhookId}; ${QUERY_CODES}; invalid_query: event_id is not ev_ and 32 hex or ` +
        'test_ and 24 hex',
    ),
    404: notFoundWebhook,
  },
  createList: {
    400: error(
      `${ENTRIES_BODY_CODES}; malformed_body: name is not 1 to 200 characters; ` +
        INVALID_IDEMPOTENCY_KEY,
      { expected: z.string().optional() },
    ),
    409: error(
      `${LIST_CAPS}: a plan limit (\`cap\`, \`limit\`, \`requested\`); ` +
        'idempotency_key_reused: the Idempotency-Key was used with another request',
      capMembers,
    ),
  },
  listById: { 400: error(invalidListId), 404: notFoundList },
  renameList: {
    400: error(`${invalidListId}; malformed_body: name is not 1 to 200 characters`),
    404: notFoundList,
  },
  listEntries: {
    400: error(
      `${invalidListId}; ${QUERY_CODES}; invalid_prefix: prefix is not 0x and 1 to 40 hex digits`,
    ),
    404: notFoundList,
  },
  changeEntries: {
    400: error(`${invalidListId}; ${ENTRIES_BODY_CODES}`, { expected: z.string().optional() }),
    404: notFoundList,
    409: error(`${LIST_CAPS}: a plan limit (\`cap\`, \`limit\`, \`requested\`)`, capMembers),
  },
  removeEntries: {
    400: error(`${invalidListId}; ${ENTRIES_BODY_CODES}`, { expected: z.string().optional() }),
    404: notFoundList,
  },
} satisfies Record<string, Record<number, ApiResponseSpec>>;

const { listQuery, ...own } = OWN_ERRORS;

/** Every error status of each route, by the route (or the routes alike). */
export const ROUTE_ERRORS = {
  limits: apiKeyRoute({}, { readsPlan: true }),
  listWebhooks: apiKeyRoute(listQuery),
  createWebhook: apiKeyRoute(own.createWebhook, { readsPlan: true }),
  patchWebhook: apiKeyRoute(own.patchWebhook, { readsPlan: true }),
  webhookById: apiKeyRoute(own.webhookById),
  deleteWebhook: apiKeyRoute(own.deleteWebhook),
  ownerAction: apiKeyRoute(own.ownerAction),
  resume: apiKeyRoute(own.resume, { readsPlan: true }),
  rotate: apiKeyRoute(own.rotate),
  testDelivery: apiKeyRoute(own.testDelivery),
  replayOne: apiKeyRoute(own.replayOne),
  replayRange: apiKeyRoute(own.replayRange),
  deliveries: apiKeyRoute(own.deliveries),
  createList: apiKeyRoute(own.createList, { readsPlan: true }),
  listLists: apiKeyRoute(listQuery),
  listById: apiKeyRoute(own.listById),
  renameList: apiKeyRoute(own.renameList),
  deleteList: apiKeyRoute(own.deleteList),
  listEntries: apiKeyRoute(own.listEntries),
  changeEntries: apiKeyRoute(own.changeEntries, { readsPlan: true }),
  removeEntries: apiKeyRoute(own.removeEntries),
  /** The operator's read of an account's webhooks (admin/operator.guard.ts). */
  adminWebhooks: {
    400: error(QUERY_CODES),
    401: error('unauthorized: no Authorization: Bearer <operator token>, or a wrong one'),
    404: error('not_found: the account id is not acc_ and 24 hex'),
  },
} satisfies Record<string, Record<number, ApiResponseSpec>>;

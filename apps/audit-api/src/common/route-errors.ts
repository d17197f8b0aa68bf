import type { ApiResponseSpec } from '@meridian/platform-http/openapi';
import { z } from 'zod';
import { errorResponseSchema, isoMs } from '../wallet/audit-response.schemas';

/**
 * Error answers the routes declare in `/openapi.json` (`@ApiRoute` responses), beside `default`,
 * as billing-ledger's `ROUTE_ERRORS`: each names the codes of its status the route may answer
 * (README "Errors"). A status whose body carries members beyond `{error, message, request_id}`
 * declares them with its schema; the others get the platform's error body.
 */

/**
 * A 400: a field's problem names it (`field`, and `expected` for a wrong EIP-55 checksum); a body
 * or query its strict schema refused says where (`location`, `path`: `body`, `query`).
 */
const badRequestSchema = (fields: readonly [string, ...string[]]) =>
  errorResponseSchema.extend({
    field: z.enum(fields).optional().describe('the body field at fault'),
    expected: z
      .string()
      .optional()
      .describe('invalid_*_checksum of an EVM address: the address with its EIP-55 checksum'),
    location: z
      .enum(['body', 'query'])
      .optional()
      .describe('malformed_body, invalid_query: the part of the request its schema refused'),
    path: z.string().optional().describe('where in that part (`body`, `query`, `query.limit`)'),
  });

const quotaExhaustedSchema = errorResponseSchema.extend({
  limit: z.number().int().min(0).describe('checks a day the plan allows'),
  resets_at: isoMs.describe('when the daily quota starts again (UTC)'),
});

const badRequest = (codes: string, fields: readonly [string, ...string[]]) =>
  ({
    description:
      'malformed_body: the body is not a JSON object or has an unknown field (location, path); ' +
      'invalid_query: any query parameter (location, path); ' +
      codes,
    schema: badRequestSchema(fields),
  }) satisfies ApiResponseSpec;

const addressCodes = (field: string) =>
  `missing_network, invalid_network, unknown_network (field network); missing_${field}, ` +
  `invalid_${field} (format), invalid_${field}_checksum (EVM: mixed case with a wrong EIP-55 ` +
  `checksum, with expected; TRON: a wrong base58check checksum) (field ${field})`;

const unauthorized: ApiResponseSpec = {
  description:
    'missing_api_key: no Authorization header; invalid_api_key: an unknown or revoked key, or ' +
    'an Authorization that is not Bearer <API_KEY> (another scheme, a key over 512 characters)',
};

const forbidden: ApiResponseSpec = {
  description:
    'audit_scope_required: the key has no access to the address audit API; plan_required: the ' +
    'account has no plan with address audit access',
};

const quotaExhausted = {
  description:
    'quota_exhausted: the daily checks of the plan are used up (limit, resets_at); not spent',
  schema: quotaExhaustedSchema,
} satisfies ApiResponseSpec;

const rateLimited: ApiResponseSpec = {
  description: 'rate_limited: too many requests a second for the plan; header Retry-After (s)',
};

const analysisFailed: ApiResponseSpec = {
  description:
    'analysis_failed: the check broke on our side (a node answer we could not read); not counted',
};

const upstreamUnavailable: ApiResponseSpec = {
  description:
    "upstream_unavailable: the network's node was unreachable, timed out, refused for load or " +
    'lacks a method; header Retry-After (s); not counted',
  // The audit error filter's own 502 (the platform declares Retry-After of 429 and 503 only).
  headers: {
    'Retry-After': {
      description: 'Seconds to wait before trying again.',
      schema: z.number().int().min(1),
      required: true,
    },
  },
};

const credentialsUnavailable: ApiResponseSpec = {
  description:
    'credentials_unavailable: API keys cannot be checked right now; header Retry-After (s)',
};

/** A check (wallet risk, wallet audit, rug pull): every status a product route answers. */
const checkErrors = <B extends ApiResponseSpec>(badRequestSpec: B) => ({
  400: badRequestSpec,
  401: unauthorized,
  402: quotaExhausted,
  403: forbidden,
  429: rateLimited,
  500: analysisFailed,
  502: upstreamUnavailable,
  503: credentialsUnavailable,
});

export const ROUTE_ERRORS = {
  wallet: checkErrors(badRequest(addressCodes('address'), ['network', 'address'])),
  rugPull: checkErrors(
    badRequest(
      `${addressCodes('contract_address')}; unsupported_network: no EVM node is configured for ` +
        'the network (field network); not_a_contract: no contract code at contract_address ' +
        '(field contract_address); not_a_token: a contract that does not answer totalSupply() ' +
        'and balanceOf(address) as an ERC-20 (a router, a factory; field contract_address)',
      ['network', 'contract_address'],
    ),
  ),
  quota: {
    400: {
      description: 'invalid_query: any query parameter (location, path)',
      schema: errorResponseSchema.extend({
        location: z.literal('query').optional().describe('the part of the request refused'),
        path: z.string().optional().describe('where in that part (`query`)'),
      }),
    },
    401: unauthorized,
    403: forbidden,
    503: credentialsUnavailable,
  },
} satisfies Record<string, Record<number, ApiResponseSpec>>;

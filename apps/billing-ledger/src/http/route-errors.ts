import { INVALID_IDEMPOTENCY_KEY } from '@meridian/platform-http';
import type { ApiResponseSpec } from '@meridian/platform-http/openapi';

/**
 * Error answers the routes declare in `/openapi.json` (`@ApiRoute` responses), beside `default`;
 * each names the codes of its status the route may answer, every status a route answers declared
 * (QA: a client generated from the document tells them apart). The guards' answers go with every
 * route of theirs: `accountKeyRoute` (AccountKeyGuard) and `operatorRoute` (OperatorGuard). The
 * 400 invalid_query of a route that declares no query is the platform document's
 * (`buildOpenApiDocument`).
 */

export const ROUTE_ERRORS = {
  topUpBody: {
    description: `malformed_body: cu is not an integer from 1 to 1,000,000,000,000; ${INVALID_IDEMPOTENCY_KEY}`,
  },
  idempotencyKeyReused: {
    description:
      'idempotency_key_reused: the Idempotency-Key was used with another request (another body, ' +
      'another route: the other top-up route, another create)',
  },
  selfServiceDisabled: {
    description:
      'self_service_disabled: this deployment grants CU and plans through the operator only ' +
      '(SELF_SERVICE_BILLING off)',
  },
  accountNotFound: { description: 'not_found: no account with this id' },
  tokenNotFound: { description: 'not_found: no active access token of the account with this id' },
  invalidQuery: {
    description: 'invalid_query: a query parameter does not fit (an unknown one, limit, cursor)',
  },
  malformedBody: { description: 'malformed_body: the body does not fit (an unknown field)' },
  usageQuery: {
    description:
      'invalid_query: a query parameter does not fit (an unknown one, from or to not a time, ' +
      'group_by), or from is not before to, or they are more than 366 days apart',
  },
  usageUnavailable: {
    description:
      'usage_unavailable: the hourly usage could not be brought up to date; header Retry-After (s)',
  },
  contractNotEnterprise: {
    description: 'contract_not_enterprise: a contract comes only with the enterprise plan',
  },
  planScope: {
    description:
      "insufficient_scope: the API key has no plan scope (it changes the account's plan; " +
      'required, beside error, names it)',
  },
  planForbidden: {
    description:
      'self_service_disabled: plans are changed by the operator only (SELF_SERVICE_BILLING off); ' +
      'contract_required: the enterprise plan is set by the operator with a contract',
  },
} satisfies Record<string, ApiResponseSpec>;

const INSUFFICIENT_SCOPE = 'insufficient_scope: the API key has no account scope';

/** AccountKeyGuard's answers, on every route of the account API. */
const ACCOUNT_KEY_ERRORS = {
  401: {
    description: 'unauthorized: no Authorization: Bearer <API key>, or an unknown or revoked key',
  },
  403: { description: INSUFFICIENT_SCOPE },
} satisfies Record<number, ApiResponseSpec>;

/** A route's own 403s beside the guard's insufficient_scope. */
export const forbiddenAlso = (
  ...own: [ApiResponseSpec, ...ApiResponseSpec[]]
): ApiResponseSpec => ({
  ...own[0],
  description: [INSUFFICIENT_SCOPE, ...own.map((spec) => spec.description)].join('; '),
});

/** OperatorGuard's answer, on every operator route. */
const OPERATOR_ERRORS = {
  401: { description: 'unauthorized: no Authorization: Bearer <operator token>, or a wrong one' },
} satisfies Record<number, ApiResponseSpec>;

/** A route of the account API: its own errors and AccountKeyGuard's. */
export const accountKeyRoute = (
  errors: Record<number, ApiResponseSpec>,
): Record<number, ApiResponseSpec> => ({ ...ACCOUNT_KEY_ERRORS, ...errors });

/** An operator route: its own errors and OperatorGuard's. */
export const operatorRoute = (
  errors: Record<number, ApiResponseSpec>,
): Record<number, ApiResponseSpec> => ({ ...OPERATOR_ERRORS, ...errors });

import type { ApiResponseSpec } from '@meridian/platform-http/openapi';

/**
 * Error answers the routes declare in `/openapi.json` (`@ApiRoute` responses), beside `default`;
 * each names the codes of its status the route may answer. 401 unauthorized and 403
 * insufficient_scope apply to every route and stay under `default`.
 */
export const ROUTE_ERRORS = {
  topUpBody: {
    description:
      'malformed_body: cu is not an integer from 1 to 1,000,000,000,000; ' +
      'invalid_idempotency_key: the Idempotency-Key header is not 1 to 200 printable ASCII characters',
  },
  idempotencyKeyReused: {
    description:
      'idempotency_key_reused: the Idempotency-Key was used with another request (another amount, ' +
      'the other top-up route, another account body)',
  },
  selfServiceDisabled: {
    description:
      'self_service_disabled: this deployment grants CU and plans through the operator only ' +
      '(SELF_SERVICE_BILLING off)',
  },
  accountNotFound: { description: 'not_found: no account with this id' },
} satisfies Record<string, ApiResponseSpec>;

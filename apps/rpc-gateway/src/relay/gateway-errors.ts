import { DomainError, httpStatusOf, quoteInput } from '@meridian/errors';
import { JSONRPC_ERROR_MESSAGE } from '@meridian/jsonrpc';
import type { Network } from '@meridian/networks';
import type { AccountSnapshot } from '../credentials/credential-cache';

/**
 * Every refusal the gateway makes, as a DomainError. The relay, the credential check and the
 * BorApi service return or throw these; each edge maps them once (HTTP: gatewayHttpStatusOf,
 * JSON-RPC: jsonRpcErrorOf, gRPC: toGrpcStatus). Fixed refusals are constants: the hot path
 * builds no error object for them. Every message starts with its code's words
 * (`JSONRPC_ERROR_MESSAGE`: "invalid params: …", "server error: …"), lower case, as the parser's
 * answers do; a method name is written as is when it is a plausible name (`quoteMethod`).
 */

/** No node answered (unreachable, timeout, none healthy). One wording on every interface. */
export const UPSTREAM_UNAVAILABLE = new DomainError(
  'upstream_unavailable',
  'unavailable',
  `${JSONRPC_ERROR_MESSAGE.SERVER_ERROR}: upstream node unavailable`,
);

/** A node answered, but not with JSON-RPC (5xx, garbage, a batch with holes). */
export const NODE_TROUBLE = new DomainError(
  'upstream_error',
  'internal',
  `${JSONRPC_ERROR_MESSAGE.INTERNAL_ERROR}: upstream node trouble`,
);

/** An id no filter of ours has (go-ethereum answers the same words with -32000). */
export const FILTER_NOT_FOUND = new DomainError(
  'filter_not_found',
  'not_found',
  'filter not found',
);

export const UNKNOWN_ACCESS_TOKEN = new DomainError(
  'unknown_access_token',
  'unauthenticated',
  `${JSONRPC_ERROR_MESSAGE.UNAUTHORIZED}: unknown or deleted access token`,
);

/** A token revoked while a WebSocket session (or a gRPC stream) is open. */
export const ACCESS_TOKEN_REVOKED = new DomainError(
  'access_token_revoked',
  'unauthenticated',
  `${JSONRPC_ERROR_MESSAGE.UNAUTHORIZED}: the access token was revoked`,
);

export const CREDENTIALS_UNAVAILABLE = new DomainError(
  'credentials_unavailable',
  'unavailable',
  `${JSONRPC_ERROR_MESSAGE.SERVER_ERROR}: access token check unavailable, retry later`,
  { details: { retryAfterMs: 1_000 } },
);

export const CU_EXHAUSTED = new DomainError(
  'cu_exhausted',
  'payment_required',
  `${JSONRPC_ERROR_MESSAGE.CU_EXHAUSTED}: the compute units (CU) balance of this account is exhausted; top up or wait for the allowance reset`,
);

/**
 * An account that cannot spend because it has no plan (a team that has not picked one, without
 * a node of its own): the webhook API's 403 plan_required names that cause, and so does node
 * access, under the status and code of a balance it cannot spend (402, -32040; a client treats
 * both alike: nothing but the owner's action helps), with `data.code` telling them apart.
 */
export const PLAN_REQUIRED = new DomainError(
  'plan_required',
  'payment_required',
  `${JSONRPC_ERROR_MESSAGE.CU_EXHAUSTED}: this account has no plan; choose a plan (or top up compute units) to use node access`,
  { details: { jsonRpcData: { code: 'plan_required' } } },
);

/**
 * Why an account may not spend now, or undefined when it may: its balance is exhausted, and
 * when it has no plan that is the cause named (PLAN_REQUIRED), else CU_EXHAUSTED. The one place
 * the balance refusal is chosen, for every interface.
 */
export function balanceRefusal(account: AccountSnapshot | undefined): DomainError | undefined {
  if (account?.status !== 'exhausted') return undefined;
  return account.planRequired === true ? PLAN_REQUIRED : CU_EXHAUSTED;
}

export const SUBSCRIPTION_LIMIT_UNAVAILABLE = new DomainError(
  'subscription_limit_unavailable',
  'unavailable',
  `${JSONRPC_ERROR_MESSAGE.SERVER_ERROR}: subscription limit unavailable`,
);

export type Interface = 'http' | 'websocket' | 'grpc';

export const NETWORK_NOT_OFFERED_CODE = 'network_not_offered';

const INTERFACE_NAME: Readonly<Record<Interface, string>> = {
  http: 'JSON-RPC',
  websocket: 'WebSocket',
  grpc: 'gRPC',
};

/**
 * A valid token for a network this endpoint does not offer on this interface (e.g. polygon-amoy
 * at asia). `not_found`, not `forbidden`: COMPAT's "unknown network path or host" (HTTP 404), and
 * JSON-RPC -32000, which a client tells apart from a bad token (401, -32041): the token is fine,
 * the endpoint is the wrong one. BorApi answers PERMISSION_DENIED for it (bor-api.service.ts).
 */
export function networkNotOffered(network: Network, where: Interface): DomainError {
  return new DomainError(
    NETWORK_NOT_OFFERED_CODE,
    'not_found',
    `not found: network ${network.key} is not offered over ${INTERFACE_NAME[where]} at this endpoint`,
  );
}

export function rateLimited(rps: number, retryAfterMs: number): DomainError {
  return new DomainError(
    'rate_limited',
    'rate_limited',
    `rate limit exceeded: the plan allows ${rps} requests per second`,
    { details: { retryAfterMs } },
  );
}

export function methodNotAvailable(method: string, network: Network): DomainError {
  return new DomainError(
    'method_not_available',
    'unimplemented',
    `the method ${quoteMethod(method)} does not exist/is not available on ${network.key}`,
  );
}

export function webSocketOnly(method: string): DomainError {
  return new DomainError(
    'websocket_only_method',
    'unimplemented',
    `the method ${quoteMethod(method)} is only available over WebSocket`,
  );
}

export function invalidParams(what: string): DomainError {
  return new DomainError(
    'invalid_params',
    'invalid',
    `${JSONRPC_ERROR_MESSAGE.INVALID_PARAMS}: ${what}`,
  );
}

/**
 * A request body over the HTTP edge's limit: HTTP 413 (the kind's status) with the JSON-RPC
 * error object every other refusal of the edge has (-32005, id null: the body was not read).
 */
export function bodyTooLarge(limitBytes: number): DomainError {
  const size =
    limitBytes % (1024 * 1024) === 0 ? `${limitBytes / (1024 * 1024)} MiB` : `${limitBytes} bytes`;
  return new DomainError(
    'request_too_large',
    'too_large',
    `${JSONRPC_ERROR_MESSAGE.LIMIT_EXCEEDED}: the request body is larger than ${size}`,
  );
}

export function limitExceeded(what: string): DomainError {
  return new DomainError(
    'limit_exceeded',
    'too_large',
    `${JSONRPC_ERROR_MESSAGE.LIMIT_EXCEEDED}: ${what}`,
  );
}

export function planLimitExceeded(what: string): DomainError {
  return new DomainError(
    'limit_exceeded',
    'conflict',
    `${JSONRPC_ERROR_MESSAGE.LIMIT_EXCEEDED}: ${what}`,
  );
}

/**
 * A method name as written when it is a plausible name (letters, digits, `_` and `.`, as in
 * go-ethereum's "the method rpc.discover does not exist/is not available"); quoted and cut
 * otherwise. QA: `rpc.discover` was quoted while `eth_foo` was not.
 */
function quoteMethod(method: string): string {
  return method.length <= 64 && /^[A-Za-z0-9_.]+$/.test(method) ? method : quoteInput(method);
}

/**
 * HTTP status of a request-level refusal on the JSON-RPC edge: REST's table (a network not
 * offered here is `not_found`: 404, COMPAT "unknown network path or host"), or the error's own
 * `details.httpStatus` where the kind's status is not the one HTTP has for it (415 for an
 * unsupported Content-Encoding, RFC 9110 §15.5.16).
 */
export function gatewayHttpStatusOf(error: DomainError): number {
  const own = error.details?.['httpStatus'];
  return typeof own === 'number' ? own : httpStatusOf[error.kind];
}

/** `Retry-After` (whole seconds, at least 1) for a refusal that says when to come back. */
export function retryAfterSecondsOf(error: DomainError): number | undefined {
  const ms = error.details?.['retryAfterMs'];
  return typeof ms === 'number' ? Math.max(1, Math.ceil(ms / 1000)) : undefined;
}

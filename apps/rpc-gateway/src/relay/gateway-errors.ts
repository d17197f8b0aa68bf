import {
  DomainError,
  httpStatusOf,
  quoteInput,
  type DomainErrorOptions,
  type ErrorKind,
} from '@meridian/errors';
import { JSONRPC_CODE_OF_KIND, jsonRpcMessage } from '@meridian/jsonrpc';
import type { Network } from '@meridian/networks';
import type { AccountSnapshot } from '../credentials/credential-cache';
import type { SpendEstimate } from '../credentials/spend-estimate';

/**
 * Every refusal the gateway makes, as a DomainError. The relay, the credential check and the
 * BorApi service return or throw these; each edge maps them once (HTTP: gatewayHttpStatusOf,
 * JSON-RPC: jsonRpcErrorOf, gRPC: toGrpcStatus). Fixed refusals are constants: the hot path
 * builds no error object for them. Every message starts with its code's words
 * (`JSONRPC_ERROR_MESSAGE`: "invalid params: …", "server error: …"), lower case, as the parser's
 * answers do, because every refusal is built by `refusal`, which takes the words from the code
 * the refusal is answered under; the exceptions are go-ethereum's words: -32601's
 * (`methodNotAvailable`, `webSocketOnly`) and the node's own "filter not found"
 * (`FILTER_NOT_FOUND`). A method name is written as is when it is a plausible
 * name (`quoteMethod`).
 */

/**
 * The one builder of the gateway's refusals: `what` after the words of the JSON-RPC code the
 * refusal is answered under (its kind's, or `details.jsonRpcCode`), so a message cannot start
 * with another code's words (QA: "filter not found", "not found: …" and "rate limit exceeded:
 * …" under -32000 and -32005).
 */
export function refusal(
  code: string,
  kind: ErrorKind,
  what: string,
  options?: DomainErrorOptions,
): DomainError {
  const own = options?.details?.['jsonRpcCode'];
  const jsonRpcCode = typeof own === 'number' ? own : JSONRPC_CODE_OF_KIND[kind];
  return new DomainError(code, kind, jsonRpcMessage(jsonRpcCode, what), options);
}

/** No node answered (unreachable, timeout, none healthy). One wording on every interface. */
export const UPSTREAM_UNAVAILABLE = refusal(
  'upstream_unavailable',
  'unavailable',
  `upstream node unavailable`,
);

/**
 * A call not sent because its request was abandoned first (a gRPC call its client cancelled or
 * whose deadline passed, ADR 0203 amendment): no node answered it, so it is not billed. Never
 * seen by the client, who is gone; the BorApi edge answers CANCELLED.
 */
export const CALL_ABANDONED = refusal(
  'call_abandoned',
  'unavailable',
  'not sent: the request was abandoned by its client',
);

/** A node answered, but not with JSON-RPC (5xx, garbage, a batch with holes). */
export const NODE_TROUBLE = refusal('upstream_error', 'internal', `upstream node trouble`);

/**
 * An id no filter of ours has (unknown, another account's, another network's or endpoint's):
 * the node's own answer, -32000 "filter not found" (go-ethereum and anvil), word for word, so that
 * an id the gateway refuses and a filter the node has dropped (uninstalled, expired) answer alike
 * (QA: "server error: filter not found" beside the node's "filter not found"). The one refusal
 * in the node's words rather than its code's (`refusal`); like -32601's go-ethereum wording.
 */
export const FILTER_NOT_FOUND = new DomainError(
  'filter_not_found',
  'not_found',
  'filter not found',
);

export const UNKNOWN_ACCESS_TOKEN = refusal(
  'unknown_access_token',
  'unauthenticated',
  `unknown or deleted access token`,
);

/** A token revoked while a WebSocket session (or a gRPC stream) is open. */
export const ACCESS_TOKEN_REVOKED = refusal(
  'access_token_revoked',
  'unauthenticated',
  `the access token was revoked`,
);

export const CREDENTIALS_UNAVAILABLE = refusal(
  'credentials_unavailable',
  'unavailable',
  `access token check unavailable, retry later`,
  { details: { retryAfterMs: 1_000 } },
);

export const CU_EXHAUSTED = refusal(
  'cu_exhausted',
  'payment_required',
  `the compute units (CU) balance of this account is exhausted; top up or wait for the allowance reset`,
);

/**
 * An account that cannot spend because it has no plan (a team that has not picked one, without
 * a node of its own): the webhook API's 403 plan_required names that cause, and so does node
 * access, under the status and code of a balance it cannot spend (402, -32040; a client treats
 * both alike: nothing but the owner's action helps), with `data.code` telling them apart.
 */
export const PLAN_REQUIRED = refusal(
  'plan_required',
  'payment_required',
  `this account has no plan; choose a plan (or top up compute units) to use node access`,
  { details: { jsonRpcData: { code: 'plan_required' } } },
);

/** A request paid whole or not at all (a gRPC method's calls): its CU, and its last call's. */
export interface WholeCu {
  readonly cu: number;
  readonly lastCu: number;
}

/**
 * A request paid whole whose CU exceed what the account has left, while some is left: not
 * "exhausted" (QA: 1,040 CU left, single calls answered, a GetBlockInfoInBatch of 100 blocks
 * told the balance was exhausted). The same status and code family as a balance it cannot spend
 * (402, -32040, RESOURCE_EXHAUSTED); its own code, so a client can tell it to send less.
 */
export function cuInsufficient(neededCu: number, leftCu: number): DomainError {
  const left = Math.max(0, Math.floor(leftCu));
  return refusal(
    'cu_insufficient',
    'payment_required',
    `this request needs ${neededCu} compute units (CU) and the account has ${left} CU left; send fewer calls, top up or wait for the allowance reset`,
    { details: { neededCu, leftCu: left } },
  );
}

/**
 * Why an account may not spend now, or undefined when it may: its balance is exhausted, by
 * billing-ledger's state or by this process's estimate of its spendable CU (`estimate`, ADR 0201
 * amendment), and when it has no plan that is the cause named (PLAN_REQUIRED), else
 * CU_EXHAUSTED; or, for a request paid whole (`whole`), the estimate does not cover all of it
 * (`cuInsufficient`). The one place the balance refusal is chosen, for every interface.
 */
export function balanceRefusal(
  account: AccountSnapshot | undefined,
  estimate?: SpendEstimate,
  whole?: WholeCu,
): DomainError | undefined {
  if (account?.status === 'exhausted' || estimate?.spent === true) return unpaidRefusal(account);
  if (
    whole !== undefined &&
    estimate !== undefined &&
    !estimate.coversWhole(whole.cu, whole.lastCu)
  )
    return cuInsufficient(whole.cu, estimate.remainingCu);
  return undefined;
}

/** The refusal of a call the account cannot pay for (`balanceRefusal`'s, whatever said so). */
export function unpaidRefusal(account: AccountSnapshot | undefined): DomainError {
  return account?.planRequired === true ? PLAN_REQUIRED : CU_EXHAUSTED;
}

export const SUBSCRIPTION_LIMIT_UNAVAILABLE = refusal(
  'subscription_limit_unavailable',
  'unavailable',
  `subscription limit unavailable`,
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
  return refusal(
    NETWORK_NOT_OFFERED_CODE,
    'not_found',
    `network ${network.key} is not offered over ${INTERFACE_NAME[where]} at this endpoint`,
  );
}

/**
 * The plan's requests per second spent: -32005's words first (QA: "rate limit exceeded: …"
 * broke the rule), "rate limit" kept for a reader who looks for it. BorApi answers it in COMPAT's
 * gRPC words ("rate limit exceeded", bor-api.service.ts) from `details.rps`. The error object's
 * `data` says when to come back, `{rps, retryAfterMs}`: over HTTP the `Retry-After` header says
 * it too (whole seconds), but a call refused on an open WebSocket has no header, only its answer
 * (as Infura's -32005 carries `data.rate.backoff_seconds`).
 */
export function rateLimited(rps: number, retryAfterMs: number): DomainError {
  return refusal('rate_limited', 'rate_limited', planRateLimitWords(rps), {
    details: { retryAfterMs, rps, jsonRpcData: { rps, retryAfterMs } },
  });
}

/**
 * The one wording of the plan's rate limit, after each interface's first words: JSON-RPC's
 * "limit exceeded: " (-32005, `rateLimited`), BorApi's "rate limit exceeded: " (COMPAT's gRPC
 * words, bor-api.service.ts). QA: gRPC said "the plan allows N requests per second".
 */
export function planRateLimitWords(rps: unknown): string {
  return `the plan's rate limit of ${String(rps)} requests per second`;
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
  return refusal('invalid_params', 'invalid', what);
}

/**
 * A request body over the HTTP edge's limit: HTTP 413 (the kind's status) with the JSON-RPC
 * error object every other refusal of the edge has (-32005, id null: the body was not read).
 */
export function bodyTooLarge(limitBytes: number): DomainError {
  const size =
    limitBytes % (1024 * 1024) === 0 ? `${limitBytes / (1024 * 1024)} MiB` : `${limitBytes} bytes`;
  return refusal('request_too_large', 'too_large', `the request body is larger than ${size}`);
}

/**
 * A request over a size limit (-32005). `data`, when given, is the error object's `data`: the
 * limit and the size asked for, `{limit, size}`, as the parser's batch refusal carries them
 * (`batchSizeError` of `@meridian/jsonrpc`), so a client can tell a request it must split from
 * a rate limit worth retrying (viem retries every -32005).
 */
export function limitExceeded(
  what: string,
  data?: { readonly limit: number; readonly size?: number },
): DomainError {
  return refusal(
    'limit_exceeded',
    'too_large',
    `${what}`,
    data === undefined ? undefined : { details: { jsonRpcData: data } },
  );
}

/**
 * A node's answer larger than what the request may receive (MAX_RESPONSE_BYTES, ADR 0215): -32005
 * with `data: {limit}` under the call's id, unbilled, as Alchemy caps eth_getLogs answers and
 * asks for a narrower range. gRPC: RESOURCE_EXHAUSTED with this message (kind `too_large`).
 */
export function answerTooLarge(limitBytes: number): DomainError {
  const size =
    limitBytes % (1024 * 1024) === 0 ? `${limitBytes / (1024 * 1024)} MiB` : `${limitBytes} bytes`;
  return refusal(
    'response_too_large',
    'too_large',
    `response too large: over ${size}; narrow the block range or split the batch`,
    { details: { jsonRpcData: { limit: limitBytes } } },
  );
}

/**
 * A node's answer refused because the worker's budget of answer bytes in flight
 * (MAX_ANSWER_BYTES_IN_FLIGHT, ADR 0215 amendment) could not hold it: -32005 with `data:
 * {limit}` (the budget) under the call's id, unbilled, not a failure of the node; the client
 * may retry shortly. Only answers past 1 MiB are refused. gRPC: RESOURCE_EXHAUSTED.
 */
export function answersBusy(limitBytes: number): DomainError {
  return refusal(
    'answers_busy',
    'too_large',
    'server busy: too many large answers in flight; retry shortly',
    { details: { jsonRpcData: { limit: limitBytes } } },
  );
}

export function planLimitExceeded(what: string): DomainError {
  return refusal('limit_exceeded', 'conflict', `${what}`);
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

import type { DomainError, ErrorKind } from '@meridian/errors';

/**
 * JSON-RPC error codes answered inside a 200 (COMPAT "Node access"). The -32000…-32099 range is
 * the server's own; our additions live there and keep the EIP-1474 meaning where one exists.
 */
export const JSONRPC_ERROR = Object.freeze({
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  /** Unknown method, or a method this network does not offer (or WebSocket-only over HTTP). */
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  /** Node trouble: the upstream answered, but wrongly. */
  INTERNAL_ERROR: -32603,
  /** Upstream unavailable (no healthy node, timeout). */
  SERVER_ERROR: -32000,
  /**
   * A request-level limit (eth_getLogs range, batch size, response size) and, over WebSocket
   * where there is no HTTP 429, the plan's rate limit. EIP-1474 "limit exceeded"; common
   * clients (viem) retry it with backoff, which is what a rate-limited client should do.
   */
  LIMIT_EXCEEDED: -32005,
  /**
   * CU balance exhausted, for transports without HTTP 402 (WebSocket). Distinct from
   * LIMIT_EXCEEDED so clients do not retry it: only a top-up or the next allowance helps.
   */
  CU_EXHAUSTED: -32040,
  /** Credential revoked while a WebSocket session is open (HTTP answers 401 before any JSON-RPC). */
  UNAUTHORIZED: -32041,
} as const);

/** EIP-1474's "method not supported", which some nodes answer instead of -32601. */
export const METHOD_NOT_SUPPORTED = -32004;

/**
 * A node's own words for "I do not implement this method", whatever its code: anvil answers
 * eth_getWork -32603 "Not implemented", go-ethereum without ethash -32000 "not supported".
 * Only the whole message counts ("transaction type not supported" is about the request).
 */
const LACKS_METHOD_WORDS = [
  /^(?:method )?not (?:yet )?(?:implemented|supported)$/,
  /^(?:the )?method \S+ (?:is )?not (?:yet )?(?:implemented|supported)$/,
  /^(?:method )?unimplemented$/,
  /^unsupported method(?:: ?\S+)?$/,
];

/**
 * Whether a node's error says that the node does not implement the method asked (not that the
 * request was wrong): -32601, EIP-1474's -32004, or a message that says only that (the words
 * above). The gateway does not bill such an answer (`isBilled` of rpc-gateway): the node lacks
 * a method the network offers, the service's gap, not the customer's request.
 */
export function nodeLacksMethod(error: {
  readonly code: number;
  readonly message: string;
}): boolean {
  if (error.code === JSONRPC_ERROR.METHOD_NOT_FOUND || error.code === METHOD_NOT_SUPPORTED)
    return true;
  if (typeof error.message !== 'string' || error.message.length > 80) return false;
  const words = error.message.trim().toLowerCase().replace(/\.$/, '');
  return LACKS_METHOD_WORDS.some((pattern) => pattern.test(words));
}

export type JsonRpcErrorCode = (typeof JSONRPC_ERROR)[keyof typeof JSONRPC_ERROR];

export interface JsonRpcErrorObject {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

/**
 * The words every message of a code starts with, then `: ` and what is wrong ("invalid params:
 * params must be an array"): one style, lower case as go-ethereum writes its own, for the
 * parser's answers and the gateway's refusals alike (QA found "Invalid params: …" beside
 * "invalid params: …").
 */
export const JSONRPC_ERROR_MESSAGE: Readonly<Record<keyof typeof JSONRPC_ERROR, string>> =
  Object.freeze({
    PARSE_ERROR: 'parse error',
    INVALID_REQUEST: 'invalid request',
    METHOD_NOT_FOUND: 'method not found',
    INVALID_PARAMS: 'invalid params',
    INTERNAL_ERROR: 'internal error',
    SERVER_ERROR: 'server error',
    LIMIT_EXCEEDED: 'limit exceeded',
    CU_EXHAUSTED: 'payment required',
    UNAUTHORIZED: 'unauthorized',
  });

/**
 * The words every message of `code` starts with (`JSONRPC_ERROR_MESSAGE`), or undefined for a
 * code outside the table (a node's own error, relayed as it answered).
 */
export function jsonRpcMessageWordsOf(code: number): string | undefined {
  return MESSAGE_WORDS_OF_CODE.get(code);
}

const MESSAGE_WORDS_OF_CODE: ReadonlyMap<number, string> = new Map(
  (Object.keys(JSONRPC_ERROR) as (keyof typeof JSONRPC_ERROR)[]).map((key) => [
    JSONRPC_ERROR[key],
    JSONRPC_ERROR_MESSAGE[key],
  ]),
);

/**
 * The one builder of a message in the house style: the code's words, then `: ` and what is
 * wrong ("invalid params: \"params\" must be an array, null or omitted"); the words alone when
 * there is nothing to add ("parse error").
 */
export function jsonRpcMessage(code: number, what?: string): string {
  const words = jsonRpcMessageWordsOf(code);
  if (words === undefined) throw new Error(`no message words for JSON-RPC code ${code}`);
  return what === undefined ? words : `${words}: ${what}`;
}

/**
 * What is wrong with `params` that is neither an array nor null nor absent, in one wording for
 * both codes it is answered under: -32600 for a scalar (not JSON-RPC 2.0), -32602 for an object
 * (by-name params, valid JSON-RPC 2.0 that no method here takes).
 */
export const PARAMS_SHAPE = '"params" must be an array, null or omitted';

/**
 * The one place a DomainError kind becomes a JSON-RPC code (every JSON-RPC edge of the gateway:
 * HTTP, WebSocket). `not_found` is -32000 as go-ethereum answers "filter not found"; a method a
 * network does not offer is `unimplemented` (-32601); a state or plan limit (`conflict`, e.g.
 * subscriptions per account) is EIP-1474's "limit exceeded".
 */
export const JSONRPC_CODE_OF_KIND: Readonly<Record<ErrorKind, number>> = Object.freeze({
  invalid: JSONRPC_ERROR.INVALID_PARAMS,
  unauthenticated: JSONRPC_ERROR.UNAUTHORIZED,
  forbidden: JSONRPC_ERROR.UNAUTHORIZED,
  not_found: JSONRPC_ERROR.SERVER_ERROR,
  conflict: JSONRPC_ERROR.LIMIT_EXCEEDED,
  // No JSON-RPC edge sets one (a REST request condition, If-Match): the server error.
  precondition_failed: JSONRPC_ERROR.SERVER_ERROR,
  payment_required: JSONRPC_ERROR.CU_EXHAUSTED,
  rate_limited: JSONRPC_ERROR.LIMIT_EXCEEDED,
  too_large: JSONRPC_ERROR.LIMIT_EXCEEDED,
  unavailable: JSONRPC_ERROR.SERVER_ERROR,
  unimplemented: JSONRPC_ERROR.METHOD_NOT_FOUND,
  internal: JSONRPC_ERROR.INTERNAL_ERROR,
});

/**
 * A DomainError as the error object of a JSON-RPC answer (its message is safe for clients);
 * `details.jsonRpcData`, when the error has it, is the object's `data` (a machine-readable
 * cause, e.g. `{code: 'plan_required'}` under the code -32040 of an exhausted balance).
 * `details.jsonRpcCode` replaces its kind's code for an error whose kind does not say it: a
 * request the edge cannot read as sent (an unsupported Content-Encoding) is `invalid`, and
 * -32600 "invalid request", not the kind's -32602 "invalid params".
 */
export function jsonRpcErrorOf(error: DomainError): JsonRpcErrorObject {
  const data = error.details?.['jsonRpcData'];
  const own = error.details?.['jsonRpcCode'];
  const code = typeof own === 'number' ? own : JSONRPC_CODE_OF_KIND[error.kind];
  return data === undefined
    ? { code, message: error.message }
    : { code, message: error.message, data };
}

import { isFilterMethod, isRetrySafeMethod, isWriteMethod } from '@meridian/networks';
import { nodeLacksMethod } from '@meridian/jsonrpc';

/** How one attempt at an upstream failed. */
export type FailureKind =
  /** Nothing reached the node (connection refused, DNS, connect timeout): safe to send elsewhere. */
  | 'not_sent'
  /** The node may have received the call (reset mid-request, timeout waiting for the answer). */
  | 'ambiguous'
  /**
   * The node answered, but not the calls' answer: HTTP 5xx, a body that is not JSON-RPC, an
   * answer under another id, a batch answered by one object.
   */
  | 'bad_answer'
  /**
   * The provider's node is throttled: HTTP 429 (whatever its body), or its own rate-limit
   * JSON-RPC error. Not the customer's call: fail over, unbilled if no node answers.
   */
  | 'throttled'
  /**
   * The node answered, but lacks what another node has (`isMissingData`): the call goes to
   * another node first; its answer is relayed only when every node asked said so.
   */
  | 'missing_data'
  /**
   * The node's answer passed what the request may receive (AnswerBudget, MAX_RESPONSE_BYTES):
   * its read was stopped. Not a failure of the node (another would answer the same): no breaker
   * count, no failover; the call is answered -32005, unbilled (ADR 0215).
   */
  | 'too_large'
  /**
   * The worker's budget of answer bytes in flight (MAX_ANSWER_BYTES_IN_FLIGHT) could not hold
   * the node's body: its read was stopped. Not a failure of the node: no breaker count, no
   * failover; the call is answered -32005 "server busy", unbilled (ADR 0215 amendment).
   */
  | 'busy';

const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_CONNECT_TIMEOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

export function classifyTransportError(error: unknown): FailureKind {
  const code = (error as { code?: unknown } | null)?.code;
  const causeCode = (error as { cause?: { code?: unknown } } | null)?.cause?.code;
  if (
    (typeof code === 'string' && NOT_SENT_CODES.has(code)) ||
    (typeof causeCode === 'string' && NOT_SENT_CODES.has(causeCode))
  )
    return 'not_sent';
  return 'ambiguous';
}

/**
 * May a call that failed this way be sent to another upstream? Read-only stateless methods:
 * always. Writes: only when the node certainly never saw them (a second node could otherwise
 * broadcast the same transaction twice, or a different one under the same nonce after a replace).
 * Filters: never (their state is in the first node).
 */
export function mayRetry(methods: readonly string[], failure: FailureKind): boolean {
  if (failure === 'too_large' || failure === 'busy') return false;
  // A node's own answer for a write (nonce, funds) is final: the client decides.
  if (failure === 'missing_data' && methods.some((m) => isWriteMethod(m))) return false;
  if (methods.some((m) => isFilterMethod(m))) return false;
  if (methods.every((m) => isRetrySafeMethod(m))) return true;
  return failure === 'not_sent' && methods.every((m) => isRetrySafeMethod(m) || isWriteMethod(m));
}

/**
 * Node answers to eth_sendRawTransaction that mean "this exact transaction is already in":
 * the client gets the transaction hash, as a success. "nonce too low" only counts when this
 * gateway already sent the same bytes in an earlier attempt (it may then be mined already).
 */
export function isAlreadyKnown(message: string, resent: boolean): boolean {
  const text = message.toLowerCase();
  if (
    text.includes('already known') ||
    text.includes('known transaction') ||
    text.includes('already imported') ||
    text.includes('transaction already exists')
  )
    return true;
  return resent && text.includes('nonce too low');
}

/** A node's JSON-RPC error meaning the provider's node is rate-limited (not the client). */
export function isNodeThrottled(code: number, message: string): boolean {
  if (code !== -32005 && code !== -32029) return false;
  const text = message.toLowerCase();
  return text.includes('rate limit') || text.includes('too many requests');
}

/**
 * The words of nodes that lack the block or state asked for (pruned, lagging, still syncing),
 * which a node that has it answers (eRPC's IsMissingDataError, the part our nodes say).
 */
const MISSING_DATA_WORDS = [
  'header not found',
  'unknown block',
  'missing trie node',
  'block not found',
  'could not find block',
];

/**
 * A node's error that another node would answer: one of the words above under -32000, or the
 * node saying it lacks a method of the network's table (`nodeLacksMethod`: -32601 "method not
 * found", -32004, or "not implemented" in a node's words; that node lacks a namespace the
 * others serve). `offered`: the network's method table.
 */
export function isMissingDataError(
  code: number,
  message: string,
  method: string,
  offered: ReadonlySet<string>,
): boolean {
  if (nodeLacksMethod({ code, message })) return offered.has(method);
  if (code !== -32000) return false;
  const text = message.toLowerCase();
  return MISSING_DATA_WORDS.some((words) => text.includes(words));
}

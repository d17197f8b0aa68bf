import { isFilterMethod, isRetrySafeMethod, isWriteMethod } from '@meridian/networks';

/** How one attempt at an upstream failed. */
export type FailureKind =
  /** Nothing reached the node (connection refused, DNS, connect timeout): safe to send elsewhere. */
  | 'not_sent'
  /** The node may have received the call (reset mid-request, timeout waiting for the answer). */
  | 'ambiguous'
  /** The node answered with HTTP 5xx or a body that is not JSON-RPC. */
  | 'bad_answer';

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

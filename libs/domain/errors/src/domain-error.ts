/**
 * The one error type of the system. A stable `code` (what clients and tests match on), a `kind`
 * that each edge maps once to its protocol (HTTP status, gRPC status, JSON-RPC code, JetStream
 * nak/term), and a `retryable` flag. Messages are safe to show to clients; internals go in `cause`.
 */
export type ErrorKind =
  | 'invalid' // the client sent something malformed or out of range
  | 'unauthenticated' // missing or unknown credential
  | 'forbidden' // credential valid, not allowed (scope, plan_required)
  | 'not_found'
  | 'conflict' // state or plan limit forbids it (409)
  | 'precondition_failed' // a condition the client set on the request is false (412: If-Match)
  | 'payment_required' // CU balance or quota exhausted (402)
  | 'rate_limited' // 429
  | 'too_large' // 413
  | 'unavailable' // a dependency is down; retry later
  | 'unimplemented' // this deployment cannot serve the call (e.g. its nodes lack the method)
  | 'internal';

export interface DomainErrorOptions {
  retryable?: boolean;
  /** Extra machine-readable facts for the client (e.g. retryAfterMs, limit). */
  details?: Record<string, unknown>;
  cause?: unknown;
}

export class DomainError extends Error {
  readonly retryable: boolean;
  readonly details: Record<string, unknown> | undefined;

  constructor(
    readonly code: string,
    readonly kind: ErrorKind,
    message: string = code,
    options: DomainErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DomainError';
    this.retryable = options.retryable ?? (kind === 'unavailable' || kind === 'rate_limited');
    this.details = options.details;
  }
}

export function isDomainError(error: unknown): error is DomainError {
  return error instanceof DomainError;
}

/** HTTP status for each kind; used by every REST edge. */
export const httpStatusOf: Record<ErrorKind, number> = {
  invalid: 400,
  unauthenticated: 401,
  payment_required: 402,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  precondition_failed: 412,
  too_large: 413,
  rate_limited: 429,
  internal: 500,
  unimplemented: 501,
  unavailable: 503,
};

/** Longest piece of client input an error message repeats (quoteInput). */
export const MAX_QUOTED_INPUT = 64;

/**
 * A piece of client input for an error message, JSON-quoted and cut to `max` characters. Error
 * messages travel where size is bounded (a gRPC status rides in an HTTP/2 trailer, whose
 * oversize broke the client's whole channel): a message never grows with the input.
 */
export function quoteInput(value: unknown, max = MAX_QUOTED_INPUT): string {
  const text = typeof value === 'string' ? value : String(value);
  return text.length <= max
    ? JSON.stringify(text)
    : `${JSON.stringify(text.slice(0, max))}… (${text.length} characters)`;
}

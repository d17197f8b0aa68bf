import {
  status as GrpcStatus,
  Metadata,
  type ServiceError,
  type StatusObject,
} from '@grpc/grpc-js';
import { DomainError, isDomainError, type ErrorKind } from '@meridian/errors';

/** gRPC status of each DomainError kind: the one mapping every gRPC edge uses. */
export const grpcStatusOf: Record<ErrorKind, GrpcStatus> = {
  invalid: GrpcStatus.INVALID_ARGUMENT,
  unauthenticated: GrpcStatus.UNAUTHENTICATED,
  forbidden: GrpcStatus.PERMISSION_DENIED,
  not_found: GrpcStatus.NOT_FOUND,
  // A state or plan limit forbids it: the caller must change something first.
  conflict: GrpcStatus.FAILED_PRECONDITION,
  precondition_failed: GrpcStatus.FAILED_PRECONDITION,
  payment_required: GrpcStatus.RESOURCE_EXHAUSTED,
  rate_limited: GrpcStatus.RESOURCE_EXHAUSTED,
  // gRPC itself answers RESOURCE_EXHAUSTED for an oversized message.
  too_large: GrpcStatus.RESOURCE_EXHAUSTED,
  unavailable: GrpcStatus.UNAVAILABLE,
  unimplemented: GrpcStatus.UNIMPLEMENTED,
  internal: GrpcStatus.INTERNAL,
};

/**
 * Longest status message sent. It travels in the `grpc-message` trailer (an HTTP/2 header): a
 * message that echoed a 100 kB request field made the client's channel hang for every later call
 * until it was rebuilt. Messages are written short; this bound holds whatever they quote.
 */
export const MAX_STATUS_DETAILS = 512;

function boundedDetails(message: string): string {
  return message.length <= MAX_STATUS_DETAILS
    ? message
    : `${message.slice(0, MAX_STATUS_DETAILS - 1)}…`;
}

/** Trailer carrying the stable DomainError code (and `error-retryable`) next to the status. */
export const ERROR_CODE_METADATA = 'error-code';
export const ERROR_RETRYABLE_METADATA = 'error-retryable';
/**
 * Trailer carrying how long to wait before retrying, in milliseconds, for a refusal that says
 * when to come back (`details.retryAfterMs`: a plan's rate limit, a check unavailable for a
 * moment). HTTP edges say it in `Retry-After`; gRPC has no such header, so this trailer, named
 * like the two above.
 */
export const RETRY_AFTER_MS_METADATA = 'retry-after-ms';

/**
 * A handler's error as a gRPC status. DomainError messages are safe for clients (see
 * DomainError); anything else becomes INTERNAL "internal error" so internals never leak.
 */
/**
 * An answer with a gRPC status that no DomainError kind stands for (UNIMPLEMENTED for a method a
 * node cannot serve, DEADLINE_EXCEEDED), for public gRPC APIs whose status codes are part of the
 * contract.
 */
export class GrpcStatusError extends Error {
  constructor(
    readonly code: GrpcStatus,
    message: string,
  ) {
    super(message);
    this.name = 'GrpcStatusError';
  }
}

export function toGrpcStatus(error: unknown): Partial<StatusObject> {
  if (error instanceof GrpcStatusError)
    return { code: error.code, details: boundedDetails(error.message) };
  const metadata = new Metadata();
  if (isDomainError(error)) {
    metadata.set(ERROR_CODE_METADATA, error.code);
    metadata.set(ERROR_RETRYABLE_METADATA, String(error.retryable));
    const retryAfterMs = error.details?.['retryAfterMs'];
    if (typeof retryAfterMs === 'number' && Number.isFinite(retryAfterMs) && retryAfterMs >= 0)
      metadata.set(RETRY_AFTER_MS_METADATA, String(Math.ceil(retryAfterMs)));
    return { code: grpcStatusOf[error.kind], details: boundedDetails(error.message), metadata };
  }
  metadata.set(ERROR_CODE_METADATA, 'internal_error');
  return { code: GrpcStatus.INTERNAL, details: 'internal error', metadata };
}

const kindOfStatus: Partial<Record<GrpcStatus, ErrorKind>> = {
  [GrpcStatus.INVALID_ARGUMENT]: 'invalid',
  [GrpcStatus.UNAUTHENTICATED]: 'unauthenticated',
  [GrpcStatus.PERMISSION_DENIED]: 'forbidden',
  [GrpcStatus.NOT_FOUND]: 'not_found',
  [GrpcStatus.FAILED_PRECONDITION]: 'conflict',
  [GrpcStatus.RESOURCE_EXHAUSTED]: 'rate_limited',
  [GrpcStatus.UNAVAILABLE]: 'unavailable',
  [GrpcStatus.DEADLINE_EXCEEDED]: 'unavailable',
  [GrpcStatus.UNIMPLEMENTED]: 'unimplemented',
};

/** A client-side gRPC failure as a DomainError (code from the server's trailer when present). */
export function fromGrpcError(error: ServiceError): DomainError {
  const code = String(
    error.metadata?.get(ERROR_CODE_METADATA)[0] ??
      `grpc_${GrpcStatus[error.code]?.toLowerCase() ?? error.code}`,
  );
  const retryableHeader = error.metadata?.get(ERROR_RETRYABLE_METADATA)[0];
  const kind = kindOfStatus[error.code] ?? 'internal';
  return new DomainError(code, kind, error.details || code, {
    cause: error,
    ...(retryableHeader === undefined ? {} : { retryable: String(retryableHeader) === 'true' }),
  });
}

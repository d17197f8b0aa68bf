import { DomainError, isDomainError } from '@meridian/errors';
import {
  BaseError,
  HttpRequestError,
  LimitExceededRpcError,
  MethodNotFoundRpcError,
  MethodNotSupportedRpcError,
  ResourceUnavailableRpcError,
  SocketClosedError,
  TimeoutError,
  WebSocketRequestError,
} from 'viem';

/** Codes of the audit API's 400s name the field or the problem, so clients can fix the call. */
export const invalidField = (code: string, message: string, field: string): DomainError =>
  new DomainError(code, 'invalid', message, { details: { field } });

/** Upstream node trouble: answered 502 by the audit error filter (COMPAT "Address audit"). */
export const UPSTREAM_UNAVAILABLE = 'upstream_unavailable';

export const upstreamUnavailable = (cause: unknown): DomainError =>
  new DomainError(
    UPSTREAM_UNAVAILABLE,
    'unavailable',
    'the node of this network did not answer; try again',
    { cause },
  );

/** Our own failure while computing a verdict (a bug, an answer we could not read): 500. */
export const ANALYSIS_FAILED = 'analysis_failed';

export const analysisFailed = (cause: unknown): DomainError =>
  new DomainError(
    ANALYSIS_FAILED,
    'internal',
    'the check could not be completed on our side; the node answered',
    { cause },
  );

/**
 * The node failed us: it could not be reached, timed out, refused for load, or lacks a method.
 * Everything else that goes wrong while reading a chain (a revert of our own simulation that
 * escaped, a result we could not decode, a bug) is ours, never reported as the node's.
 */
export function isNodeFailure(error: unknown): boolean {
  if (!(error instanceof BaseError)) return false;
  return (
    error.walk(
      (e) =>
        e instanceof HttpRequestError ||
        e instanceof WebSocketRequestError ||
        e instanceof SocketClosedError ||
        e instanceof TimeoutError ||
        e instanceof LimitExceededRpcError ||
        e instanceof ResourceUnavailableRpcError ||
        e instanceof MethodNotFoundRpcError ||
        e instanceof MethodNotSupportedRpcError,
    ) !== null
  );
}

/** The one mapping of a failure while reading or simulating on a chain to what the client gets. */
export const chainReadFailure = (error: unknown): DomainError =>
  isDomainError(error)
    ? error
    : isNodeFailure(error)
      ? upstreamUnavailable(error)
      : analysisFailed(error);

import type { Logger } from 'pino';

/** What the guard listens on: `process`, or an emitter standing in for it in tests. */
export interface GuardedProcess {
  on(event: 'unhandledRejection', listener: (reason: unknown) => void): unknown;
  on(event: 'uncaughtException', listener: (error: Error) => void): unknown;
  off(event: 'unhandledRejection', listener: (reason: unknown) => void): unknown;
  off(event: 'uncaughtException', listener: (error: Error) => void): unknown;
}

const REQUEST_ID = Symbol.for('meridian.requestId');

/**
 * Marks an error with the id of the request it belongs to, so that if nobody handles it the
 * process guard's log line still says which request it was. Returns the error.
 */
export function tagRequestId<E>(error: E, requestId: string): E {
  if (error !== null && typeof error === 'object')
    (error as Record<symbol, unknown>)[REQUEST_ID] = requestId;
  return error;
}

/** The request id an error (or one of its causes) was tagged with, if any. */
export function requestIdOfError(error: unknown): string | undefined {
  for (let e = error, depth = 0; e !== null && typeof e === 'object' && depth < 8; depth++) {
    const tagged = (e as Record<symbol, unknown>)[REQUEST_ID];
    if (typeof tagged === 'string') return tagged;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * No process dies of a request: an unhandled rejection or an uncaught exception is logged (as an
 * error, with the request id when the error carries one) and the process keeps serving. Each is a
 * defect to fix, never a way to stop: Node's default (exit on either) let one malformed request
 * end a gateway process in every region at once. Install it once the app is listening, so that a
 * failed start still exits. Returns the uninstaller.
 */
export function installProcessGuard(logger: Logger, target: GuardedProcess = process): () => void {
  const onRejection = (reason: unknown) =>
    logger.error(
      { err: reason, request_id: requestIdOfError(reason), event: 'unhandledRejection' },
      'unhandled rejection (a defect); the process keeps serving',
    );
  const onException = (error: Error) =>
    logger.error(
      { err: error, request_id: requestIdOfError(error), event: 'uncaughtException' },
      'uncaught exception (a defect); the process keeps serving',
    );
  target.on('unhandledRejection', onRejection);
  target.on('uncaughtException', onException);
  return () => {
    target.off('unhandledRejection', onRejection);
    target.off('uncaughtException', onException);
  };
}

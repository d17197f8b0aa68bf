import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';

/** What the guard listens on: `process`, or an emitter standing in for it in tests. */
export interface GuardedProcess {
  on(event: 'unhandledRejection', listener: (reason: unknown) => void): unknown;
  on(event: 'uncaughtException', listener: (error: Error) => void): unknown;
  off(event: 'unhandledRejection', listener: (reason: unknown) => void): unknown;
  off(event: 'uncaughtException', listener: (error: Error) => void): unknown;
}

/**
 * The id of the request whose work is running, for everything that request starts, synchronous
 * or not (timers, promises, stream callbacks). A bare string, no object per request.
 */
const requestIds = new AsyncLocalStorage<string>();

/**
 * Makes `requestId` the current request's for the rest of the work this request causes. Called
 * once per request, first thing where the request arrives (platform-http's onRequest hook, the
 * gateway's relay route, WebSocket message and gRPC handlers). `enterWith`, not `run`: node
 * emits a request's body events later from the connection's own async context, which `run`
 * would have left already; the connection's context is re-entered by its next request.
 */
export function enterRequest(requestId: string): void {
  if (requestContext) requestIds.enterWith(requestId);
}

let requestContext = true;

/**
 * Turns `enterRequest` into a no-op for this process, before any request: on Node 20 the first
 * AsyncLocalStorage entry enables promise hooks for every promise of the process, for good. The
 * rpc-gateway opts out (ADR 0210: +14 % CPU per relayed call, measured A/B); its handlers catch
 * their own failures and log them with the request id, and what still reaches the guard (work
 * shared by many requests, such as a coalesced upstream batch) is logged without one.
 */
export function disableRequestContext(): void {
  requestContext = false;
}

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's request id (X-Request-Id, gRPC `x-request-id`) when it is sane, otherwise a new one. */
export function requestIdFrom(given: string | undefined): string {
  return given !== undefined && SANE_REQUEST_ID.test(given) ? given : randomUUID();
}

/** The id of the request whose work is running now, if any. */
export function currentRequestId(): string | undefined {
  return requestIds.getStore();
}

/**
 * No process dies of a request: an unhandled rejection or an uncaught exception is logged (as an
 * error, with the id of the request whose work failed: node calls both handlers in the async
 * context of the failed promise or callback) and the process keeps serving. Each is a
 * defect to fix, never a way to stop: Node's default (exit on either) let one malformed request
 * end a gateway process in every region at once. Install it once the app is listening, so that a
 * failed start still exits. Returns the uninstaller.
 */
export function installProcessGuard(logger: Logger, target: GuardedProcess = process): () => void {
  const onRejection = (reason: unknown) =>
    logger.error(
      { err: reason, request_id: currentRequestId(), event: 'unhandledRejection' },
      'unhandled rejection (a defect); the process keeps serving',
    );
  const onException = (error: Error) =>
    logger.error(
      { err: error, request_id: currentRequestId(), event: 'uncaughtException' },
      'uncaught exception (a defect); the process keeps serving',
    );
  target.on('unhandledRejection', onRejection);
  target.on('uncaughtException', onException);
  return () => {
    target.off('unhandledRejection', onRejection);
    target.off('uncaughtException', onException);
  };
}

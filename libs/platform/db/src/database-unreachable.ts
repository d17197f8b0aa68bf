import { DomainError } from '@meridian/errors';

/**
 * The answer of every REST app while its Postgres is out of reach (`isDatabaseUnreachable`, the
 * platform's DomainErrorFilter): 503 with this code and `Retry-After`, never a 500 `internal`. A
 * restart or failover of Postgres takes seconds; the pool connects again on the next request.
 */
export const DATABASE_UNAVAILABLE = 'database_unavailable';

/** Seconds a client waits before trying again (`Retry-After`). */
export const DATABASE_RETRY_AFTER_SECONDS = 2;

/**
 * Node's codes for a socket to Postgres that could not be opened or was lost: refused (the
 * server down or restarting), reset or broken under a query, timed out, no route, a host name
 * that does not resolve right now.
 */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/**
 * SQLSTATEs of a server that is out of reach or going away: class 08 (connection exception),
 * 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now (starting up, in
 * recovery).
 */
const isUnreachableSqlState = (code: string): boolean =>
  /^08[0-9A-Z]{3}$/.test(code) || code === '57P01' || code === '57P02' || code === '57P03';

/**
 * Messages with no code: TypeORM before its DataSource connected ("Driver not Connected"),
 * node-postgres losing its socket ("Connection terminated", "… unexpectedly", "… due to
 * connection timeout") or reusing a broken client, pg-pool's wait for a connection timing out.
 */
const UNREACHABLE_MESSAGES = [
  /^Driver not Connected$/,
  /^Connection terminated\b/,
  /^timeout exceeded when trying to connect$/,
  /^Client has encountered a connection error and is not queryable$/,
  /^Client was closed and is not queryable$/,
];

/**
 * Whether `error` says Postgres is out of reach (not what a statement did): the one classifier
 * of connection-class database errors, for the REST edges (503 `database_unavailable`, the
 * platform's DomainErrorFilter) and message consumers (retry later, not a dead letter). Reads
 * the error, the driver error TypeORM wraps (`driverError`), an AggregateError's errors (a host
 * with several addresses, all refused) and the `cause` of our own DomainErrors; not the cause of
 * another library's error: `fetch failed` caused by ECONNREFUSED is a node or an API out of
 * reach, not Postgres. A constraint, a data exception, a deadlock or a serialization failure is
 * not either: the server answered.
 */
export function isDatabaseUnreachable(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 5) return false;
  const { code, message, driverError, cause, errors } = error as {
    code?: unknown;
    message?: unknown;
    driverError?: unknown;
    cause?: unknown;
    errors?: unknown;
  };
  if (typeof code === 'string' && (SOCKET_CODES.has(code) || isUnreachableSqlState(code)))
    return true;
  if (typeof message === 'string' && UNREACHABLE_MESSAGES.some((pattern) => pattern.test(message)))
    return true;
  const inner = [
    driverError,
    ...(error instanceof DomainError ? [cause] : []),
    ...(Array.isArray(errors) ? errors : []),
  ];
  return inner.some((next) => next !== error && isDatabaseUnreachable(next, depth + 1));
}

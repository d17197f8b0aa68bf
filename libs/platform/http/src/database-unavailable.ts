/**
 * The answer of every REST app while its Postgres is out of reach (isDatabaseUnreachable of
 * libs/platform/db): 503 with this code and `Retry-After`, never a 500 `internal`. A restart or
 * failover of Postgres takes seconds; the pool connects again on the next request.
 */
export const DATABASE_UNAVAILABLE = 'database_unavailable';

/** Seconds a client waits before trying again (`Retry-After`). */
export const DATABASE_RETRY_AFTER_SECONDS = 2;

export const DATABASE_UNAVAILABLE_MESSAGE = 'the database cannot be reached right now; retry later';

/** How `/openapi.json` names it under each operation's 503 (the builder adds it). */
export const DATABASE_UNAVAILABLE_DESCRIPTION = `${DATABASE_UNAVAILABLE}: the database cannot be reached right now; header Retry-After (s)`;

import { DATABASE_UNAVAILABLE } from '@meridian/platform-db';

/**
 * The code and `Retry-After` of the 503 every REST app answers while its Postgres is out of reach
 * live in libs/platform/db beside `isDatabaseUnreachable`, which this lib imports: the db lib's
 * own refusals (an account's write turn, AccountTurns) answer the same 503.
 */
export { DATABASE_RETRY_AFTER_SECONDS, DATABASE_UNAVAILABLE } from '@meridian/platform-db';

export const DATABASE_UNAVAILABLE_MESSAGE = 'the database cannot be reached right now; retry later';

/** How `/openapi.json` names it under each operation's 503 (the builder adds it). */
export const DATABASE_UNAVAILABLE_DESCRIPTION = `${DATABASE_UNAVAILABLE}: the database cannot be reached right now; header Retry-After (s)`;

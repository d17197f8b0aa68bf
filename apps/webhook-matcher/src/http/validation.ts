import { parseQuery as parsePlatformQuery } from '@meridian/platform-http';
import { z } from 'zod';

/**
 * Strict bodies and queries, refused as every API of the house refuses them (platform-http
 * `parseRequestPart`): 400 `malformed_body` / `invalid_query`, up to three issues in the message,
 * `details` `{location, path}` with the part in front (`body.filters.any[0]`, `query.limit`, or
 * `body` / `query` for the whole part).
 */
export { parseBody } from '@meridian/platform-http';

/** Query parameters refused with a code of their own; any other is 400 invalid_query. */
export const OWN_QUERY_CODES: Readonly<Record<string, string>> = {
  cursor: 'invalid_cursor',
  prefix: 'invalid_prefix',
};

/** The platform's `parseQuery`, with the matcher's own codes of `cursor` and `prefix`. */
export const parseQuery = <S extends z.ZodType>(schema: S, query: unknown): z.output<S> =>
  parsePlatformQuery(schema, query, OWN_QUERY_CODES);

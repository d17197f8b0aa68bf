import { DomainError } from '@meridian/errors';

/**
 * An escaped U+0000 in JSON text: `\u0000` preceded by an even number of backslashes (an odd
 * number would make it the literal text "\u0000").
 */
const ESCAPED_NUL = /(?:^|[^\\])(?:\\\\)*\\u0000/i;

/**
 * Client text that no store can keep: PostgreSQL `text` and `jsonb` refuse U+0000, so a NUL that
 * got through would surface as a database error (a 500) deep inside a feature. Refused here,
 * once for every REST app, before any handler sees the request.
 */
export function refuseNulInJson(raw: string): void {
  if (raw.includes('\u0000') || ESCAPED_NUL.test(raw)) {
    throw new DomainError('malformed_body', 'invalid', 'text must not contain U+0000 (NUL)');
  }
}

/** `%00` anywhere in the path or query string (node's parser already refuses a raw NUL byte). */
export function refuseNulInUrl(url: string): void {
  if (/%00/.test(url)) {
    throw new DomainError('invalid_request', 'invalid', 'the URL must not contain %00 (NUL)');
  }
}

/**
 * JSON bodies, strictly: `application/json` (and `+json`) only; an empty body is "no body" (common
 * clients send the header with an empty body on action routes), and the route's own schema decides
 * whether it needs one.
 */
export function parseJsonBody(raw: string): unknown {
  if (raw.trim() === '') return undefined;
  refuseNulInJson(raw);
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    throw new DomainError('malformed_body', 'invalid', 'the body is not valid JSON');
  }
}

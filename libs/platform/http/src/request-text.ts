import { DomainError } from '@meridian/errors';

/**
 * An escaped U+0000 in JSON text: `\u0000` preceded by an even number of backslashes (an odd
 * number would make it the literal text "\u0000").
 */
const ESCAPED_NUL = /(?:^|[^\\])(?:\\\\)*\\u0000/i;

/**
 * Where a JSON text may hold a lone surrogate: an escape `\uD800`-`\uDFFF`. Text decoded from
 * UTF-8 (`utf8Text`) holds surrogates only in pairs, so a body with a literal emoji and no such
 * escape is not scanned.
 */
const MAY_HOLD_SURROGATE = /\\u[dD][89a-fA-F]/;

const isHigh = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;
const isLow = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;

/**
 * The first lone UTF-16 surrogate a JSON text holds, escaped (`"\ud800"`) or as a code unit, or
 * undefined: a high one not followed at once by a low one, or a low one not preceded by a high
 * one. Escapes are read in order, so `\\ud800` (an escaped backslash, then "ud800") is text.
 */
function loneSurrogateIn(raw: string): number | undefined {
  if (!MAY_HOLD_SURROGATE.test(raw)) return undefined;
  /** The previous code unit of the decoded text, when it was a high surrogate awaiting its pair. */
  let pending: number | undefined;
  for (let i = 0; i < raw.length;) {
    let unit: number;
    if (raw.charCodeAt(i) === 0x5c /* \ */) {
      const escaped = raw[i + 1];
      if (escaped === 'u') {
        unit = Number.parseInt(raw.slice(i + 2, i + 6), 16);
        i += 6;
      } else {
        unit = 0x5c;
        i += 2;
      }
    } else {
      unit = raw.charCodeAt(i);
      i += 1;
    }
    if (pending !== undefined && !isLow(unit)) return pending;
    if (pending === undefined && isLow(unit)) return unit;
    pending = pending === undefined && isHigh(unit) ? unit : undefined;
  }
  return pending;
}

/**
 * Client text that no store can keep: PostgreSQL `text` and `jsonb` refuse U+0000, so a NUL that
 * got through would surface as a database error (a 500) deep inside a feature; a lone UTF-16
 * surrogate has no UTF-8 form, so it would be stored as U+FFFD, silently changing the text (QA:
 * a webhook named "\ud800" came back named "\ufffd"). Refused here, once for every REST app and
 * every text of the body (values and keys), before any handler sees the request.
 */
export function refuseUnstorableText(raw: string): void {
  if (raw.includes('\u0000') || ESCAPED_NUL.test(raw)) {
    throw new DomainError('malformed_body', 'invalid', 'text must not contain U+0000 (NUL)');
  }
  const lone = loneSurrogateIn(raw);
  if (lone !== undefined) {
    const point = lone.toString(16).toUpperCase();
    throw new DomainError(
      'malformed_body',
      'invalid',
      `text must not contain a lone surrogate (U+${point}): it is no Unicode character`,
    );
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
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A body's bytes as text: invalid UTF-8 is 400 `malformed_body` naming it (QA: decoded as text
 * by the framework, its replacement characters made the body longer than its Content-Length and
 * the answer said "Request body size did not match Content-Length"). A leading BOM is dropped.
 */
export function utf8Text(bytes: Uint8Array): string {
  try {
    return UTF8.decode(bytes);
  } catch {
    throw new DomainError('malformed_body', 'invalid', 'the body is not valid UTF-8');
  }
}

export function parseJsonBody(raw: string): unknown {
  if (raw.trim() === '') return undefined;
  refuseUnstorableText(raw);
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    throw new DomainError('malformed_body', 'invalid', 'the body is not valid JSON');
  }
}

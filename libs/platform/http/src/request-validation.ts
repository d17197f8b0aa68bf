import { DomainError } from '@meridian/errors';
import type { z } from 'zod';

/** The part of a request a value came from; every validation message starts with it. */
export type RequestPart = 'body' | 'query' | 'params' | 'headers';

/** The 400 code of each part when the caller names none. */
export const INVALID_PART_CODE: Record<RequestPart, string> = {
  body: 'malformed_body',
  query: 'invalid_query',
  params: 'invalid_params',
  headers: 'invalid_headers',
};

/** What one key of each part is called in a message. */
const KEY_NAME: Record<RequestPart, string> = {
  body: 'field',
  query: 'parameter',
  params: 'path parameter',
  headers: 'header',
};

/**
 * Where an issue is, from its part: `query.limit`, `body.accounts[1].plan`, or the part alone
 * (`query`) for a problem of the whole part, such as an unknown key.
 */
export function issueWhere(part: RequestPart, path: readonly PropertyKey[]): string {
  let out: string = part;
  for (const segment of path)
    out += typeof segment === 'number' ? `[${segment}]` : `.${String(segment)}`;
  return out;
}

/**
 * One issue as `<where>: <what>`; unknown keys are named (`query: unknown parameter "sort"`).
 * `sent`, the part as the client sent it, lets the message name what the schema's words would
 * hide (QA): a parameter given twice reaches the schema as an array ("expected number, received
 * NaN"), and a JSON `null` body is validated as no body ("received undefined").
 */
export function describeIssue(part: RequestPart, issue: z.core.$ZodIssue, sent?: unknown): string {
  const [key, ...deeper] = issue.path;
  if (
    part === 'query' &&
    typeof key === 'string' &&
    deeper.length === 0 &&
    issue.code !== 'unrecognized_keys' &&
    typeof sent === 'object' &&
    sent !== null &&
    Array.isArray((sent as Record<string, unknown>)[key])
  )
    return `${issueWhere(part, issue.path)}: given more than once`;
  if (part === 'body' && sent === null && issue.path.length === 0)
    return 'body: the body must be a JSON object, received null';
  const keys = issue.code === 'unrecognized_keys' ? issue.keys : undefined;
  const what = keys
    ? `unknown ${KEY_NAME[part]}${keys.length > 1 ? 's' : ''} ${keys
        .map((key) => JSON.stringify(key).slice(0, 66))
        .join(', ')}`
    : isAbsent(sent, issue.path)
      ? // QA: "Invalid input: expected string, received undefined" for a field left out.
        `required ${KEY_NAME[part]} missing` +
        (issue.code === 'invalid_type'
          ? ` (expected ${issue.expected})`
          : issue.code === 'invalid_value'
            ? ` (expected ${issue.values.length > 1 ? 'one of ' : ''}${issue.values
                .map((value) => JSON.stringify(value))
                .join('|')})`
            : '')
      : issue.message;
  return `${issueWhere(part, issue.path)}: ${what}`;
}

/** Whether the key at `path` is absent from an object the client sent (not given at all). */
function isAbsent(sent: unknown, path: readonly PropertyKey[]): boolean {
  if (path.length === 0) return false;
  let parent = sent;
  for (const segment of path.slice(0, -1)) {
    if (typeof parent !== 'object' || parent === null) return false;
    parent = (parent as Record<PropertyKey, unknown>)[segment];
  }
  return (
    typeof parent === 'object' &&
    parent !== null &&
    !Array.isArray(parent) &&
    !Object.prototype.hasOwnProperty.call(parent, path[path.length - 1]!)
  );
}

/**
 * The 400 code of a refusal: one code for the part, or codes of its own for some keys (a query's
 * `cursor`: `invalid_cursor`), by the top-level key of the first issue, the part's code
 * (`INVALID_PART_CODE`) for any other.
 */
export type RequestPartCode = string | Readonly<Record<string, string>>;

function codeOf(
  part: RequestPart,
  code: RequestPartCode | undefined,
  first: z.core.$ZodIssue | undefined,
): string {
  if (typeof code === 'string') return code;
  const key = first?.path[0];
  const own = code && typeof key === 'string' ? code[key] : undefined;
  return own ?? INVALID_PART_CODE[part];
}

/**
 * The 400 for a value of one part that its schema refused: up to three issues, each located.
 * `sent` is the part as sent (`describeIssue`).
 */
export function requestPartError(
  part: RequestPart,
  error: z.ZodError,
  code?: RequestPartCode,
  sent?: unknown,
): DomainError {
  const first = error.issues[0];
  return new DomainError(
    codeOf(part, code, first),
    'invalid',
    error.issues
      .slice(0, 3)
      .map((issue) => describeIssue(part, issue, sent))
      .join('; '),
    { details: { location: part, path: first ? issueWhere(part, first.path) : part } },
  );
}

/**
 * Validates one part of a request with its (strict) schema: anything it does not allow, unknown
 * keys included, is a 400 whose message says where (`requestPartError`).
 */
export function parseRequestPart<S extends z.ZodType>(
  part: RequestPart,
  schema: S,
  value: unknown,
  code?: RequestPartCode,
): z.output<S> {
  const result = schema.safeParse(part === 'body' ? (value ?? undefined) : (value ?? {}));
  if (!result.success) throw requestPartError(part, result.error, code, value);
  return result.data;
}

/** Strict JSON bodies: 400 `malformed_body`. */
export const parseBody = <S extends z.ZodType>(schema: S, body: unknown): z.output<S> =>
  parseRequestPart('body', schema, body);

/** Strict query strings: 400 `invalid_query`, or the code `codes` gives the parameter at fault. */
export const parseQuery = <S extends z.ZodType>(
  schema: S,
  query: unknown,
  codes?: Readonly<Record<string, string>>,
): z.output<S> => parseRequestPart('query', schema, query, codes);

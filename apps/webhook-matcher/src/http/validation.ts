import { DomainError } from '@meridian/errors';
import { describeIssue, type RequestPart } from '@meridian/platform-http';
import { z } from 'zod';

/** The issue's path inside its part (`details.path`); `(body)` / `(query)` for the whole part. */
function pathOf(segments: readonly PropertyKey[], part: RequestPart): string {
  let out = '';
  for (const s of segments)
    out += typeof s === 'number' ? `[${s}]` : out === '' ? String(s) : `.${String(s)}`;
  return out || `(${part})`;
}

/** Strict request bodies: anything the schema does not allow (unknown fields included) is 400 malformed_body. */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  // A JSON `null` is no body for the routes that take none (`emptyBody.optional()`), as before.
  const result = schema.safeParse(body ?? undefined);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new DomainError('malformed_body', 'invalid', describeIssue('body', issue, body), {
      details: { path: pathOf(issue.path, 'body') },
    });
  }
  return result.data;
}

/** Query parameters refused with a code of their own; any other is 400 invalid_query. */
const OWN_CODES: Readonly<Record<string, string>> = {
  cursor: 'invalid_cursor',
  prefix: 'invalid_prefix',
};

export function parseQuery<S extends z.ZodType>(schema: S, query: unknown): z.output<S> {
  const values = (query ?? {}) as Record<string, unknown>;
  const result = schema.safeParse(values);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const path = pathOf(issue.path, 'query');
    const code = OWN_CODES[path] ?? 'invalid_query';
    throw new DomainError(code, 'invalid', describeIssue('query', issue, values), {
      details: { path },
    });
  }
  return result.data;
}

/** The query of a route that declares none (`@ApiRoute` without `query`): it takes no parameter. */
export const noQuery = z.strictObject({});

import { DomainError } from '@meridian/errors';
import type { z } from 'zod';

function pathOf(segments: readonly PropertyKey[]): string {
  let out = '';
  for (const s of segments)
    out += typeof s === 'number' ? `[${s}]` : out === '' ? String(s) : `.${String(s)}`;
  return out || '(body)';
}

/** Strict request bodies: anything the schema does not allow (unknown fields included) is 400 malformed_body. */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const result = schema.safeParse(body ?? undefined);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const path = pathOf(issue.path);
    const keys = (issue as { keys?: string[] }).keys;
    const message = keys
      ? `unknown field ${keys.map((k) => JSON.stringify(k).slice(0, 66)).join(', ')}`
      : issue.message;
    throw new DomainError('malformed_body', 'invalid', `${path}: ${message}`, {
      details: { path },
    });
  }
  return result.data;
}

export function parseQuery<S extends z.ZodType>(schema: S, query: unknown): z.output<S> {
  const result = schema.safeParse(query ?? {});
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const path = pathOf(issue.path);
    const code = path === 'cursor' ? 'invalid_cursor' : 'invalid_query';
    throw new DomainError(code, 'invalid', `${path}: ${issue.message}`, { details: { path } });
  }
  return result.data;
}

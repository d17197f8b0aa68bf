import { DomainError } from '@meridian/errors';
import type { z } from 'zod';

/**
 * Strict bodies, with every problem named by its field (`fields`), so the page can show each
 * message next to its input.
 */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const result = schema.safeParse(body ?? undefined);
  if (result.success) return result.data;
  const fields: Record<string, string> = {};
  for (const issue of result.error.issues) {
    const path = issue.path.map(String).join('.') || '(body)';
    fields[path] ??= issue.message;
  }
  const message = Object.entries(fields)
    .map(([field, text]) => `${field}: ${text}`)
    .join('; ');
  throw new DomainError('malformed_body', 'invalid', message, { details: { fields } });
}

/** Strict query strings: 400 `invalid_query` naming each bad parameter. */
export function parseQuery<S extends z.ZodType>(schema: S, query: unknown): z.output<S> {
  const result = schema.safeParse(query ?? {});
  if (result.success) return result.data;
  const message = result.error.issues
    .map((issue) => `${issue.path.map(String).join('.') || '(query)'}: ${issue.message}`)
    .join('; ');
  throw new DomainError('invalid_query', 'invalid', message);
}

import { DomainError } from '@meridian/errors';
import type { z } from 'zod';

function issuesOf(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.map(String).join('.') || '(body)'}: ${issue.message}`)
    .join('; ');
}

/** Strict request bodies: anything the schema does not allow (unknown fields included) is 400 malformed_body. */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const result = schema.safeParse(body ?? undefined);
  if (!result.success) throw new DomainError('malformed_body', 'invalid', issuesOf(result.error));
  return result.data;
}

export function parseQuery<S extends z.ZodType>(schema: S, query: unknown): z.output<S> {
  const result = schema.safeParse(query ?? {});
  if (!result.success) throw new DomainError('invalid_query', 'invalid', issuesOf(result.error));
  return result.data;
}

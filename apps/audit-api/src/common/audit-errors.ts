import { DomainError } from '@meridian/errors';

/** Codes of the audit API's 400s name the field or the problem, so clients can fix the call. */
export const invalidField = (code: string, message: string, field: string): DomainError =>
  new DomainError(code, 'invalid', message, { details: { field } });

/** Upstream node trouble: answered 502 by the audit error filter (COMPAT "Address audit"). */
export const UPSTREAM_UNAVAILABLE = 'upstream_unavailable';

export const upstreamUnavailable = (cause: unknown): DomainError =>
  new DomainError(
    UPSTREAM_UNAVAILABLE,
    'unavailable',
    'the node of this network did not answer; try again',
    { cause },
  );

import { createHash } from 'node:crypto';
import { DomainError } from '@meridian/errors';
import { z } from 'zod';

/**
 * JSON with object keys sorted, so two spellings of one request give one text. Recursive: call
 * it on a validated body only (a webhook's filter tree is at most 8 levels, the rest flat).
 */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * What an `Idempotency-Key` is bound to (billing-ledger's top-ups, webhook-matcher's webhook
 * create): sha256 (hex) of the operation and the request as validated
 * (`<operation>\n<canonical JSON>`), so whitespace, key order and absent fields do not matter and
 * any other value does. A reuse with another fingerprint is 409 `idempotency_key_reused`.
 * billing-ledger's migration `1765000000000-idempotency-keys` computes the same in SQL for
 * top-ups made before it; keep them in step.
 */
export function requestFingerprint(operation: string, request: unknown): string {
  return createHash('sha256')
    .update(`${operation}\n${canonicalJson(request)}`)
    .digest('hex');
}

/** 1 to 200 printable ASCII characters, no spaces: a UUID, a ULID, a Stripe-style key. */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,200}$/;

/** The 400 a route taking the header declares (its responses' text): the rule below, in words. */
export const INVALID_IDEMPOTENCY_KEY =
  'invalid_idempotency_key: the Idempotency-Key header is not 1 to 200 printable ASCII ' +
  'characters without spaces';

/**
 * The `Idempotency-Key` header as a route documents it (`@ApiRoute({ headers })`): the rule
 * `idempotencyKeyOf` enforces.
 */
export const idempotencyKeyHeader = {
  description:
    'Optional. Retrying with the same key and the same request answers what the first answered; ' +
    'the same key with another request is 409 idempotency_key_reused. 1 to 200 printable ASCII ' +
    'characters, no spaces (else 400 invalid_idempotency_key).',
  schema: z.string().regex(IDEMPOTENCY_KEY),
};

/**
 * The `Idempotency-Key` header of every API that takes one (billing-ledger's top-ups,
 * webhook-matcher's webhook create): absent is null; anything else must be 1 to 200 printable
 * ASCII characters, or the request is 400 `invalid_idempotency_key`, named as a header.
 */
export function idempotencyKeyOf(header: string | string[] | undefined): string | null {
  if (header === undefined) return null;
  if (typeof header !== 'string' || !IDEMPOTENCY_KEY.test(header))
    throw new DomainError(
      'invalid_idempotency_key',
      'invalid',
      'headers.idempotency-key: 1 to 200 printable ASCII characters, no spaces',
      { details: { location: 'headers', path: 'headers.idempotency-key' } },
    );
  return header;
}

import { randomBytes } from 'node:crypto';
import { DomainError, quoteInput } from '@meridian/errors';
import { z } from 'zod';

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** `<prefix>_` + 24 base32 characters (120 random bits). */
export function newId(prefix: 'wh' | 'al'): string {
  const bytes = randomBytes(24);
  let out = `${prefix}_`;
  for (const byte of bytes) out += BASE32[byte & 31];
  return out;
}

/**
 * The path ids' one home: `checkId` and `checkEventId` test with these, and the routes declare
 * them as their path parameters' schemas in `/openapi.json` (`@ApiRoute` `params`).
 */
export const ID_SCHEMAS = {
  wh: z
    .string()
    .regex(/^wh_[a-z2-7]{24}$/)
    .describe('a webhook id: wh_ and 24 base32 characters (else 400 invalid_id)'),
  al: z
    .string()
    .regex(/^al_[a-z2-7]{24}$/)
    .describe('an address list id: al_ and 24 base32 characters (else 400 invalid_id)'),
} as const;

/** An event id: `ev_` + 32 hex (eventIdOf) or a test delivery's `test_` + 24 hex. */
export const EVENT_ID = /^(?:ev_[0-9a-f]{32}|test_[0-9a-f]{24})$/;

export const eventIdSchema = z
  .string()
  .regex(EVENT_ID)
  .describe('an event id: ev_ and 32 hex, or test_ and 24 hex (else 400 invalid_id)');

/** A path id of the wrong form is 400 invalid_id (a well-formed unknown one is 404). */
export function checkId(prefix: 'wh' | 'al', id: string): string {
  if (!ID_SCHEMAS[prefix].safeParse(id).success)
    throw new DomainError(
      'invalid_id',
      'invalid',
      `${quoteInput(id)} is not ${prefix === 'wh' ? 'a webhook' : 'an address list'} id`,
    );
  return id;
}

/**
 * An event id in a path (`EVENT_ID`). Any other form is 400 invalid_id like a malformed webhook id; a well-formed unknown one is 404.
 */
export function checkEventId(id: string): string {
  if (!eventIdSchema.safeParse(id).success)
    throw new DomainError('invalid_id', 'invalid', `${quoteInput(id)} is not an event id`);
  return id;
}

/** The `params` of a route under `/webhooks/{id}` and `/address-lists/{id}`. */
export const webhookIdParams = { id: ID_SCHEMAS.wh };
export const listIdParams = { id: ID_SCHEMAS.al };

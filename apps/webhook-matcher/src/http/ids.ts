import { randomBytes } from 'node:crypto';
import { DomainError, quoteInput } from '@meridian/errors';

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** `<prefix>_` + 24 base32 characters (120 random bits). */
export function newId(prefix: 'wh' | 'al'): string {
  const bytes = randomBytes(24);
  let out = `${prefix}_`;
  for (const byte of bytes) out += BASE32[byte & 31];
  return out;
}

const PATTERNS = { wh: /^wh_[a-z2-7]{24}$/, al: /^al_[a-z2-7]{24}$/ } as const;

/** A path id of the wrong form is 400 invalid_id (a well-formed unknown one is 404). */
export function checkId(prefix: 'wh' | 'al', id: string): string {
  if (!PATTERNS[prefix].test(id))
    throw new DomainError(
      'invalid_id',
      'invalid',
      `${quoteInput(id)} is not ${prefix === 'wh' ? 'a webhook' : 'an address list'} id`,
    );
  return id;
}

/** An event id: `ev_` + 32 hex (eventIdOf) or a test delivery's `test_` + 24 hex. */
export const EVENT_ID = /^(?:ev_[0-9a-f]{32}|test_[0-9a-f]{24})$/;

/**
 * An event id in a path (`EVENT_ID`). Any other form is 400 invalid_id like a malformed webhook id; a well-formed unknown one is 404.
 */
export function checkEventId(id: string): string {
  if (!EVENT_ID.test(id))
    throw new DomainError('invalid_id', 'invalid', `${quoteInput(id)} is not an event id`);
  return id;
}

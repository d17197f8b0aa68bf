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
      `${quoteInput(id)} is not a ${prefix === 'wh' ? 'webhook' : 'address list'} id`,
    );
  return id;
}

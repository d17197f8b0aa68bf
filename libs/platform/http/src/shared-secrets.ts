import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * What an `Authorization` header holds: nothing (`absent`: no header, or an empty one), a
 * usable `Bearer <credential>` (one token of at most 512 characters), or something else that
 * was sent all the same (`unusable`: another scheme such as Basic, a Bearer value too long or of
 * several words, the header repeated). An app that tells a missing credential from a bad one
 * answers `unusable` as a bad one: a key was sent (QA F5).
 */
export type AuthorizationHeader =
  | { readonly kind: 'absent' }
  | { readonly kind: 'bearer'; readonly credential: string }
  | { readonly kind: 'unusable' };

export function authorizationOf(header: unknown): AuthorizationHeader {
  if (header === undefined || header === null) return { kind: 'absent' };
  if (typeof header === 'string' && header.trim() === '') return { kind: 'absent' };
  const match = typeof header === 'string' ? /^Bearer\s+(\S{1,512})\s*$/i.exec(header) : null;
  return match ? { kind: 'bearer', credential: match[1]! } : { kind: 'unusable' };
}

/** The credential of `Authorization: Bearer <credential>` (at most 512 characters), if any. */
export function bearerOf(header: unknown): string | undefined {
  const read = authorizationOf(header);
  return read.kind === 'bearer' ? read.credential : undefined;
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * Secrets a deployment shares with its callers (the operator token): the current one and, while
 * it is rotated, the previous one. A presented value is compared with each of them in constant
 * time, all of them every time, so neither which one matched nor their lengths show in the
 * answer's timing.
 */
export class SharedSecrets {
  private readonly digests: readonly Buffer[];

  constructor(values: readonly (string | undefined)[]) {
    this.digests = values.filter((value): value is string => !!value).map(digest);
  }

  /** Whether no secret is set (every presented value is refused). */
  get empty(): boolean {
    return this.digests.length === 0;
  }

  matches(presented: string | undefined): boolean {
    if (presented === undefined) return false;
    const got = digest(presented);
    let matched = false;
    for (const expected of this.digests) matched = timingSafeEqual(got, expected) || matched;
    return matched;
  }
}

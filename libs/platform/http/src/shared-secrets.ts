import { createHash, timingSafeEqual } from 'node:crypto';

/** The credential of `Authorization: Bearer <credential>` (at most 512 characters), if any. */
export function bearerOf(header: unknown): string | undefined {
  const match = typeof header === 'string' ? /^Bearer\s+(\S{1,512})\s*$/i.exec(header) : null;
  return match?.[1];
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

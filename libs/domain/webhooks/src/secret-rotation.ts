/**
 * The overlap of signing secrets after a rotation (COMPAT "secret/rotate", ADR 0423 amendment):
 * every previous secret keeps signing until its own announced expiry, however many rotations
 * follow; at most `MAX_PREVIOUS_SECRETS` of them at once. A rotation that would make one more is
 * refused (never ends a secret early: each expiry was promised to the customer when it was
 * announced); `expire_previous` ends them all at once.
 */

/** The replaced secret keeps signing this long after a rotation (COMPAT). */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

/**
 * Previous secrets that may sign beside the current one. Each adds a `v1` entry to both
 * signature headers and two HMACs to every attempt, and a receiver checks each entry it gets:
 * 3 lets a customer rotate again while two fleets still roll out earlier secrets, without a
 * header that grows with every rotation. Svix keeps each old key until its own expiry too and
 * refuses a rotation beyond 5 (`limit_reached`, naming when the next one expires).
 */
export const MAX_PREVIOUS_SECRETS = 3;

export interface PreviousSecret<T = string> {
  sealed: T;
  expiresAt: Date;
}

/** The secrets still signing at `now`, the latest expiry first (one per sealed value). */
export function livePreviousSecrets<T>(
  secrets: readonly PreviousSecret<T>[],
  now: Date,
): PreviousSecret<T>[] {
  const live = secrets
    .filter((s) => s.expiresAt.getTime() > now.getTime())
    .sort((a, b) => b.expiresAt.getTime() - a.expiresAt.getTime());
  const seen = new Set<T>();
  const unique: PreviousSecret<T>[] = [];
  for (const s of live) {
    if (seen.has(s.sealed)) continue;
    seen.add(s.sealed);
    unique.push(s);
  }
  return unique;
}

export type RotationPlan<T> =
  | { ok: true; previous: PreviousSecret<T>[] }
  /** Refused: `live` previous secrets sign already; the earliest ends at `nextRotationAt`. */
  | { ok: false; live: PreviousSecret<T>[]; nextRotationAt: Date };

/**
 * The previous secrets after replacing `current` at `now`: none with `expirePrevious`, else the
 * replaced one (for `ROTATION_OVERLAP_MS`) and every previous one still live, until its own
 * expiry. Refused when that would be more than `MAX_PREVIOUS_SECRETS`.
 */
export function planRotation<T>(
  current: T,
  previous: readonly PreviousSecret<T>[],
  now: Date,
  expirePrevious: boolean,
): RotationPlan<T> {
  if (expirePrevious) return { ok: true, previous: [] };
  const live = livePreviousSecrets(previous, now);
  if (live.length >= MAX_PREVIOUS_SECRETS)
    return { ok: false, live, nextRotationAt: live.at(-1)!.expiresAt };
  const replaced = { sealed: current, expiresAt: new Date(now.getTime() + ROTATION_OVERLAP_MS) };
  return { ok: true, previous: livePreviousSecrets([replaced, ...live], now) };
}

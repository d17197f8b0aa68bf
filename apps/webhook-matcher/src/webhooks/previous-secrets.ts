import { livePreviousSecrets, type PreviousSecret } from '@meridian/webhooks';

/** How a webhook row stores its previous signing secrets (migration 1765500000000). */
export interface StoredPreviousSecrets {
  /** The one with the latest expiry, as the first schema held it (read by older pods). */
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | null;
  /** Every previous secret, `expires_at` an ISO time. */
  previous_secrets: Array<{ sealed: string; expires_at: string }> | null;
}

/**
 * The row's previous secrets, live or not: the list, and the columns' secret when the list
 * lacks it (a rotation by a pod of the release before the list, which writes the columns only).
 */
export function previousSecretsOf(row: StoredPreviousSecrets): PreviousSecret[] {
  const list = (row.previous_secrets ?? []).map((s) => ({
    sealed: s.sealed,
    expiresAt: new Date(s.expires_at),
  }));
  if (
    row.previous_secret_sealed !== null &&
    row.previous_secret_expires_at !== null &&
    !list.some((s) => s.sealed === row.previous_secret_sealed)
  )
    list.push({ sealed: row.previous_secret_sealed, expiresAt: row.previous_secret_expires_at });
  return list;
}

/** The live previous secrets of the row at `now`, the latest expiry first. */
export function livePreviousSecretsOf(row: StoredPreviousSecrets, now: Date): PreviousSecret[] {
  return livePreviousSecrets(previousSecretsOf(row), now);
}

/** SQL parameters storing `previous` (latest expiry first): the columns' one, then the list. */
export function previousSecretsParams(
  previous: readonly PreviousSecret[],
): [string | null, Date | null, string] {
  const latest = previous[0];
  return [
    latest?.sealed ?? null,
    latest?.expiresAt ?? null,
    JSON.stringify(
      previous.map((s) => ({ sealed: s.sealed, expires_at: s.expiresAt.toISOString() })),
    ),
  ];
}

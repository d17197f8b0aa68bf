import type { StaleRowsQuery } from '@meridian/platform-secrets';
import type { EntityManager } from 'typeorm';
import type { PreviousSecret } from '@meridian/webhooks';
import { returning } from '../db/returning';
import { previousSecretsParams, type StoredPreviousSecrets } from './previous-secrets';

/** The sealed secrets of one webhook row, as the reseal pass reads them. */
export interface SealedSecretsRow extends StoredPreviousSecrets {
  id: string;
  secret_sealed: string;
}

/** A row holds a secret not sealed under the current key (`$1`: its `v2.<key id>.` prefix). */
const STALE = `(NOT starts_with(secret_sealed, $1)
  OR (previous_secret_sealed IS NOT NULL AND NOT starts_with(previous_secret_sealed, $1))
  OR EXISTS (SELECT 1 FROM jsonb_array_elements(previous_secrets) AS p
              WHERE NOT starts_with(p->>'sealed', $1)))`;

/** SQL of the reseal pass (ADR 0424): rows sealed under another key than the current one. */
export class SecretResealRepository {
  /** The stale rows as the reseal passes lock them (`resealPasses`). */
  readonly staleRows: StaleRowsQuery = {
    table: 'webhooks.webhooks',
    columns:
      'id, secret_sealed, previous_secret_sealed, previous_secret_expires_at, previous_secrets',
    stale: STALE,
  };

  /**
   * Stores the resealed values. The version stays (nothing the customer sees changed), but the
   * bucket's entry is now stale: `published_version` drops below `version`, so the status
   * publisher puts the entry again (right after, or on its tick after a crash).
   */
  async store(
    m: EntityManager,
    id: string,
    secretSealed: string,
    previous: readonly PreviousSecret[],
  ): Promise<void> {
    const [latestSealed, latestExpiresAt, list] = previousSecretsParams(previous);
    await m.query(
      `UPDATE webhooks.webhooks
          SET secret_sealed = $2,
              previous_secret_sealed = $3,
              previous_secret_expires_at = $4,
              previous_secrets = $5::jsonb,
              published_version = LEAST(published_version, version - 1)
        WHERE id = $1`,
      [id, secretSealed, latestSealed, latestExpiresAt, list],
    );
  }

  /** How many rows still hold a secret not sealed under the current key. */
  async countStale(m: EntityManager, currentPrefix: string): Promise<number> {
    const rows: Array<{ n: string }> = await m.query(
      `SELECT count(*) AS n FROM webhooks.webhooks WHERE ${STALE}`,
      [currentPrefix],
    );
    return Number(rows[0]!.n);
  }

  /** How many of `ids` the bucket does not hold at their version yet. */
  async countUnpublished(m: EntityManager, ids: readonly string[]): Promise<number> {
    if (ids.length === 0) return 0;
    const rows: Array<{ n: string }> = await m.query(
      `SELECT count(*) AS n FROM webhooks.webhooks
        WHERE id = ANY($1::text[]) AND version > published_version`,
      [ids],
    );
    return Number(rows[0]!.n);
  }

  /**
   * Of `ids`, the rows already sealed under the current key are marked for publishing again
   * (their bucket entry still holds an older value). Returns how many were marked.
   */
  async markUnpublishedIfFresh(
    m: EntityManager,
    currentPrefix: string,
    ids: readonly string[],
  ): Promise<number> {
    const result: unknown = await m.query(
      `UPDATE webhooks.webhooks SET published_version = LEAST(published_version, version - 1)
        WHERE id = ANY($2::text[]) AND NOT ${STALE}
        RETURNING id`,
      [currentPrefix, ids],
    );
    return returning<{ id: string }>(result).length;
  }
}

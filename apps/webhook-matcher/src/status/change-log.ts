import type { EntityManager } from 'typeorm';

/**
 * THE write of the change feed (webhooks.change_log): every transaction that changes a webhook
 * or an address list calls this in the same transaction, and the matcher's index reloads what it
 * names. Column names are a contract with the matching half of this app; keep them stable.
 */
export async function recordChange(
  m: EntityManager,
  change: { accountId: string; webhookId?: string | null; listId?: string | null },
): Promise<void> {
  await m.query(
    `INSERT INTO webhooks.change_log (account_id, webhook_id, list_id) VALUES ($1, $2, $3)`,
    [change.accountId, change.webhookId ?? null, change.listId ?? null],
  );
}

/**
 * Deletes up to `limit` rows of the change feed written more than `retentionMs` ago, oldest
 * first: a `RetentionPruner` batch (`ChangeLogRetention`, which says what readers need). Ages
 * are by the database's clock, as `at` is written and as the feed's readers measure it
 * (`changesAfter`, `changeFeedStart`). The count deleted.
 */
export async function pruneChanges(
  m: Pick<EntityManager, 'query'>,
  retentionMs: number,
  limit: number,
): Promise<number> {
  const [row]: Array<{ n: number }> = await m.query(
    `WITH deleted AS (
       DELETE FROM webhooks.change_log WHERE seq IN (
         SELECT seq FROM webhooks.change_log
          WHERE at < now() - $1 * interval '1 millisecond'
          ORDER BY seq LIMIT $2)
       RETURNING 1)
     SELECT count(*)::int AS n FROM deleted`,
    [retentionMs, limit],
  );
  return row?.n ?? 0;
}

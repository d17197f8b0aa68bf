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

import { Injectable } from '@nestjs/common';
import type { DropReason, StatusTrigger, WebhookStatus } from '@meridian/webhooks';
import type { EntityManager } from 'typeorm';

/** Who made a change: `owner:<api key's account>`, `billing`, or `service`. */
export type StatusActor = 'owner' | 'billing' | 'service';

@Injectable()
export class StatusHistoryRepository {
  async record(
    m: EntityManager,
    entry: {
      webhookId: string;
      accountId: string;
      from: WebhookStatus | null;
      to: WebhookStatus;
      trigger: StatusTrigger;
      actor: StatusActor;
      dropReason: DropReason | null;
      at: Date;
    },
  ): Promise<void> {
    await m.query(
      `INSERT INTO webhooks.status_history (webhook_id, account_id, from_status, to_status, trigger, actor, drop_reason, at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        entry.webhookId,
        entry.accountId,
        entry.from,
        entry.to,
        entry.trigger,
        entry.actor,
        entry.dropReason,
        entry.at,
      ],
    );
  }

  /**
   * Each webhook's latest return to `active` from a paused status (a row from a non-null status
   * to `active`: an owner resume or a plan change; a create has none): when, and what it left.
   * Read with the index on (webhook_id, id DESC).
   */
  async lastReactivations(
    m: EntityManager,
    webhookIds: readonly string[],
  ): Promise<Map<string, { at: Date; from: WebhookStatus }>> {
    const out = new Map<string, { at: Date; from: WebhookStatus }>();
    if (webhookIds.length === 0) return out;
    const rows: Array<{ webhook_id: string; from_status: WebhookStatus; at: Date }> = await m.query(
      `SELECT DISTINCT ON (webhook_id) webhook_id, from_status, at FROM webhooks.status_history
         WHERE webhook_id = ANY($1::text[]) AND to_status = 'active' AND from_status IS NOT NULL
           AND from_status <> 'active'
         ORDER BY webhook_id, id DESC`,
      [webhookIds],
    );
    for (const row of rows) out.set(row.webhook_id, { at: row.at, from: row.from_status });
    return out;
  }

  async of(
    m: EntityManager,
    webhookId: string,
  ): Promise<
    Array<{
      from_status: string | null;
      to_status: string;
      trigger: string;
      actor: string;
      drop_reason: string | null;
      at: Date;
    }>
  > {
    return m.query(
      `SELECT from_status, to_status, trigger, actor, drop_reason, at FROM webhooks.status_history
       WHERE webhook_id = $1 ORDER BY id`,
      [webhookId],
    );
  }
}

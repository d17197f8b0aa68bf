import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';

/**
 * Event types relayed from the outbox (keys of Events in @meridian/contracts; `usageParked`: a
 * dead letter of the usage consumer, ADR 0104).
 */
export type OutboxEventType = 'planChanged' | 'credentialRevoked' | 'topUpCleared' | 'usageParked';

export interface OutboxRow {
  id: string;
  eventType: OutboxEventType;
  payload: Record<string, unknown>;
}

/**
 * Events that must not be lost are written in the transaction of the change they describe and
 * relayed to JetStream afterwards (at least once; Nats-Msg-Id makes the repeat harmless).
 */
@Injectable()
export class OutboxRepository {
  constructor(private readonly dataSource: DataSource) {}

  async add(
    manager: EntityManager,
    eventType: OutboxEventType,
    payload: object,
    now: Date,
  ): Promise<void> {
    await manager.query(
      'INSERT INTO billing.outbox (event_type, payload, created_at) VALUES ($1, $2, $3)',
      [eventType, JSON.stringify(payload), now.toISOString()],
    );
  }

  async pending(limit: number): Promise<OutboxRow[]> {
    const rows: Array<{
      id: string;
      event_type: OutboxEventType;
      payload: Record<string, unknown>;
    }> = await this.dataSource.query(
      'SELECT id, event_type, payload FROM billing.outbox WHERE published_at IS NULL ORDER BY id LIMIT $1',
      [limit],
    );
    return rows.map((row) => ({ id: row.id, eventType: row.event_type, payload: row.payload }));
  }

  async markPublished(ids: readonly string[], now: Date): Promise<void> {
    if (ids.length === 0) return;
    await this.dataSource.query(
      'UPDATE billing.outbox SET published_at = $2 WHERE id = ANY($1::bigint[])',
      [ids, now.toISOString()],
    );
  }

  /**
   * Deletes up to `limit` events published before `before`, oldest first (a `RetentionPruner`
   * batch); unpublished ones are never deleted, whatever their age. The count deleted.
   */
  async prunePublished(before: Date, limit: number): Promise<number> {
    const [row]: Array<{ n: number }> = await this.dataSource.query(
      `WITH deleted AS (
         DELETE FROM billing.outbox WHERE id IN (
           SELECT id FROM billing.outbox
            WHERE published_at IS NOT NULL AND published_at < $1
            ORDER BY id LIMIT $2)
         RETURNING 1)
       SELECT count(*)::int AS n FROM deleted`,
      [before.toISOString(), limit],
    );
    return row?.n ?? 0;
  }
}

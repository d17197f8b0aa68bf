import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { RecordStats } from './webhook.view';

/**
 * The spec's `stats` members of webhook records ("Webhook record": failed attempts, breaker
 * skips included; events dropped above the events-per-second limit), read from the counters the
 * delivery log and the matcher keep, for a page of webhooks in one query. A webhook with neither
 * counter has zeros.
 */
@Injectable()
export class RecordStatsRepository {
  constructor(private readonly db: DataSource) {}

  async of(webhookIds: readonly string[]): Promise<Map<string, RecordStats>> {
    const rows = (await this.db.query(
      `SELECT w.id, COALESCE(s.failed_total, 0)::text AS failed_total,
              COALESCE(r.rate_limited_total, 0)::text AS rate_limited_total
         FROM unnest($1::text[]) AS w(id)
         LEFT JOIN webhooks.delivery_stats s ON s.webhook_id = w.id
         LEFT JOIN webhooks.matching_rate_limited r ON r.webhook_id = w.id`,
      [webhookIds],
    )) as { id: string; failed_total: string; rate_limited_total: string }[];
    return new Map(
      rows.map((row) => [
        row.id,
        {
          failed_total: Number(row.failed_total),
          rate_limited_total: Number(row.rate_limited_total),
        },
      ]),
    );
  }
}

import { statusLabel } from '@meridian/webhooks';
import type { WebhookResponse } from './webhook-response.schemas';
import type { RecordStatsRepository } from './record-stats.repository';
import { livePreviousSecretsOf } from './previous-secrets';
import type { WebhookRow } from './webhooks.repository';

/** The spec's `stats` members of a webhook record (DeliveriesRepository.recordStats). */
export interface RecordStats {
  failed_total: number;
  rate_limited_total: number;
}

const NO_STATS: RecordStats = { failed_total: 0, rate_limited_total: 0 };

/**
 * The webhook object of the API (COMPAT, and the spec's `stats` members), snake_case; its schema
 * is `webhookResponse`.
 */
export function webhookView(
  row: WebhookRow,
  now: Date,
  stats: RecordStats = NO_STATS,
): WebhookResponse {
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    status_label: statusLabel(row.status),
    chain: row.chain,
    network: row.network,
    trigger_type: row.trigger_type,
    filters: row.filters,
    addresses: row.addresses,
    list_refs: row.list_refs,
    confirm_depth: row.confirm_depth,
    phases: row.phases,
    target_url: row.target_url,
    version: row.version,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    previous_secrets_expire_at: livePreviousSecretsOf(row, now).map((s) =>
      s.expiresAt.toISOString(),
    ),
    stats: { failed_total: stats.failed_total, rate_limited_total: stats.rate_limited_total },
  };
}

/**
 * Records with their `stats` (one query for all) and the previous secrets still signing at
 * `now`: every route that answers webhooks uses it.
 */
export async function webhookViews(
  rows: readonly WebhookRow[],
  recordStats: Pick<RecordStatsRepository, 'of'>,
  now: Date,
): Promise<WebhookResponse[]> {
  const stats = await recordStats.of(rows.map((row) => row.id));
  return rows.map((row) => webhookView(row, now, stats.get(row.id)));
}

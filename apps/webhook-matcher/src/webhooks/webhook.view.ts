import { statusLabel } from '@meridian/webhooks';
import type { WebhookResponse } from './webhook-response.schemas';
import type { RecordStatsRepository } from './record-stats.repository';
import type { RecordUsage, RecordUsageRepository } from './record-usage';
import { livePreviousSecretsOf } from './previous-secrets';
import type { WebhookRow } from './webhooks.repository';

/** The spec's `stats` members of a webhook record (DeliveriesRepository.recordStats). */
export interface RecordStats {
  failed_total: number;
  rate_limited_total: number;
}

const NO_STATS: RecordStats = { failed_total: 0, rate_limited_total: 0 };

/**
 * The webhook object of the API (COMPAT, the spec's `stats` members and what it holds against
 * the per-webhook caps, `usage`), snake_case; its schema is `webhookResponse`.
 */
export function webhookView(
  row: WebhookRow,
  now: Date,
  usage: RecordUsage,
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
    usage: {
      addresses: usage.addresses,
      inline_addresses: usage.inline_addresses,
      list_refs: usage.list_refs,
    },
  };
}

/** Where the records' `stats` and `usage` are read from. */
export interface RecordSources {
  stats: Pick<RecordStatsRepository, 'of'>;
  usage: Pick<RecordUsageRepository, 'of'>;
}

/**
 * Records with their `stats` and `usage` (one query each for all) and the previous secrets still
 * signing at `now`: every route that answers webhooks uses it.
 */
export async function webhookViews(
  rows: readonly WebhookRow[],
  sources: RecordSources,
  now: Date,
): Promise<WebhookResponse[]> {
  const ids = rows.map((row) => row.id);
  const [stats, usage] = await Promise.all([sources.stats.of(ids), sources.usage.of(ids)]);
  return rows.map((row) => {
    // Rows are never removed (a delete is a status), so every record has its count.
    const counted = usage.get(row.id);
    if (counted === undefined) throw new Error(`webhook ${row.id} has no count`);
    return webhookView(row, now, counted, stats.get(row.id));
  });
}

import { statusLabel } from '@meridian/webhooks';
import type { WebhookResponse } from './webhook-response.schemas';
import type { WebhookRow } from './webhooks.repository';

/** The webhook object of the API (COMPAT), snake_case; its schema is `webhookResponse`. */
export function webhookView(row: WebhookRow): WebhookResponse {
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
  };
}

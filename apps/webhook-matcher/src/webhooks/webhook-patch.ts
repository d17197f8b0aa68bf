import { isDeepStrictEqual } from 'node:util';
import type { PatchedWebhookFields, WebhookRow } from './webhooks.repository';

/**
 * Whether a PATCH would change a stored field of `current` (README "Webhook versions"). False:
 * the PATCH is a no-op and answers the webhook as it is (version, ETag, updated_at kept, no
 * change-feed row), as an address list's no-op write does. Filters are compared as values, not
 * as text: jsonb hands back an object's keys in its own order. Arrays keep their order (an
 * address list in another order, or phases, is stored as given, so it is a change).
 */
export function patchChangesWebhook(current: WebhookRow, next: PatchedWebhookFields): boolean {
  const pairs: Array<[unknown, unknown]> = [
    [current.name, next.name],
    [current.filters, next.filters],
    [current.addresses, next.addresses],
    [current.list_refs, next.listRefs],
    [current.filter_tree, next.tree],
    [current.inline_address_count, next.inlineAddresses],
    [current.confirm_depth, next.confirmDepth],
    [current.phases, next.phases],
    [current.target_url, next.targetUrl],
  ];
  return pairs.some(([stored, given]) => !isDeepStrictEqual(stored, given));
}

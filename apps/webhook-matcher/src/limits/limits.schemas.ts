import { AccountTypeSchema } from '@meridian/contracts';
import { PLAN_IDS } from '@meridian/plans';
import { z } from 'zod';
import { count } from '../http/response-shapes';
import { WEBHOOK_NETWORKS } from '../webhooks/networks';

/** GET /webhooks/limits: the caps billing resolved for the account and what counts against them. */
export const limitsResponse = z.strictObject({
  tier: z.enum(PLAN_IDS).nullable().describe('the plan; null for a team account without one'),
  account_type: AccountTypeSchema,
  plan_required: z.boolean(),
  node_owner: z.boolean(),
  caps: z.strictObject({
    active_webhooks: count.describe('every non-deleted webhook counts, paused ones too'),
    addresses_per_webhook: count,
    inline_addresses: count,
    list_refs: count,
    addresses_per_list: count,
    address_lists: count,
    addresses_per_account: count,
    events_per_second: count,
    events_burst: count,
  }),
  usage: z.strictObject({
    account_addresses: count,
    webhooks: count.describe('the same number as active_webhooks (its older name)'),
    active_webhooks: count.describe('what caps.active_webhooks counts: every non-deleted webhook'),
    webhooks_status_active: count.describe('webhooks in status active'),
    address_lists: count,
  }),
  networks: z
    .array(z.enum(WEBHOOK_NETWORKS))
    .describe(
      'network keys a webhook may watch here: the networks this deployment indexes (NETWORKS); ' +
        'a create on another is 400 network_not_indexed',
    ),
});

import { DomainError } from '@meridian/errors';
import {
  checkWebhookWrite,
  PLANS,
  planFitCounts,
  type CountedWebhook,
  type WebhookCaps,
} from '@meridian/plans';
import { recordUsageOf } from './record-usage';

const lists = new Map([
  ['al_seven', 7],
  ['al_four', 4],
]);
// A list in two leaves is two references (rules 2 and 3, no de-duplication).
const webhook: CountedWebhook = {
  id: 'wh_a',
  inlineAddresses: 4,
  listRefs: ['al_seven', 'al_seven', 'al_four'],
};
const roomy: WebhookCaps = { ...PLANS.premium.webhooks, activeWebhooks: 100 };

/** The cap a create of `webhook` under `caps` is refused on, and the count it names. */
function refusal(caps: WebhookCaps) {
  try {
    checkWebhookWrite(caps, { candidate: webhook, others: [], lists, isNew: true });
    return null;
  } catch (error) {
    const details = (error as DomainError).details as { cap: string; requested: number };
    return [(error as DomainError).code, details.requested];
  }
}

describe('recordUsageOf: a record counts what the per-webhook caps check', () => {
  const usage = recordUsageOf(webhook, lists);

  it('counts the inline addresses, every list reference and their entries', () => {
    expect(usage).toEqual({ addresses: 4 + 7 + 7 + 4, inline_addresses: 4, list_refs: 3 });
  });

  it.each([
    ['addressesPerWebhook', 'addresses', 'cap_addresses_exceeded'],
    ['inlineAddresses', 'inline_addresses', 'cap_inline_addresses_exceeded'],
    ['listRefs', 'list_refs', 'cap_list_refs_exceeded'],
  ] as const)('%s: a cap at the count passes, one below refuses naming it', (cap, field, code) => {
    expect(refusal({ ...roomy, [cap]: usage[field] })).toBeNull();
    expect(refusal({ ...roomy, [cap]: usage[field] - 1 })).toEqual([code, usage[field]]);
    // A resume of the paused webhook (planFitCounts) names the same count.
    const fit = planFitCounts({ ...roomy, [cap]: usage[field] - 1 }, [webhook], lists);
    expect(fit.get(webhook.id)?.requested).toBe(usage[field]);
  });
});

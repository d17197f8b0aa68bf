import { PLAN_IDS, PLANS, type PlanId, type PlanLimits } from '@meridian/plans';
import type { PlanChangeRoute } from './cap-errors';

/**
 * The customer's Plan page (ADR 0604 amendment "Plan changes are the owner's"): the plans with
 * their limits from the one plan table (`@meridian/plans`, what billing and webhook-matcher
 * enforce; never a copy), the current one marked, and what a change does. Enterprise comes with
 * a contract the operator sets (billing refuses it here: 403 contract_required), so it is not
 * offered, and an enterprise account's page is read-only.
 */
export interface PlanRow {
  id: PlanId;
  name: string;
  allowance: string;
  nodeRps: number;
  accessTokens: number;
  activeWebhooks: number;
  addressesPerWebhook: number;
  addressesPerAccount: number;
  auditChecksPerDay: number;
  current: boolean;
}

const allowanceWords = (plan: PlanLimits): string =>
  `${plan.allowance.cu.toLocaleString('en-US')} CU a ${plan.allowance.period}`;

export function planRows(current: string | null): PlanRow[] {
  return PLAN_IDS.filter((id) => id !== 'enterprise' || current === 'enterprise').map((id) => {
    const plan = PLANS[id];
    return {
      id,
      name: plan.displayName,
      allowance: allowanceWords(plan),
      nodeRps: plan.nodeRps,
      accessTokens: plan.accessTokens,
      activeWebhooks: plan.webhooks.activeWebhooks,
      addressesPerWebhook: plan.webhooks.addressesPerWebhook,
      addressesPerAccount: plan.webhooks.addressesPerAccount,
      auditChecksPerDay: plan.audit.checksPerDay,
      current: id === current,
    };
  });
}

export const isPlanId = (value: string): value is PlanId =>
  (PLAN_IDS as readonly string[]).includes(value);

/** Whether the page offers a change: an owner, self-service billing on, not on a contract. */
export function canChangePlan(route: PlanChangeRoute, current: string | null): boolean {
  return route === 'self' && current !== 'enterprise';
}

/** What `GET /webhooks/limits` says of the account's webhooks (null: not known). */
export interface WebhookUsageFacts {
  active_webhooks?: number;
  account_addresses?: number;
}

const count = (n: number, one: string, many: string) =>
  `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

/**
 * The confirmation's words for a change from `current` to `next`. A downgrade pauses the
 * webhooks over the new plan's limits, keeping active the newest that fit (webhook-matcher's
 * fit walk, ADR 0401); from the account's counts (`/webhooks/limits`) the page says how many at
 * least cannot stay active: every webhook counts towards the cap, paused ones too (rule 1).
 */
export function planChangeWords(
  current: string | null,
  next: PlanId,
  usage: WebhookUsageFacts | null,
): string[] {
  const to = PLANS[next];
  const from = current && current in PLANS ? PLANS[current as PlanId] : null;
  const words = [`Your plan becomes ${to.displayName} now, for every user of the account.`];
  if (from && to.rank < from.rank) {
    words.push(
      `Webhooks over the ${to.displayName} plan's limits are paused (the newest that fit stay active), and access tokens over its ${to.accessTokens.toLocaleString('en-US')} keep working but no new one can be made.`,
    );
    const held = usage?.active_webhooks ?? 0;
    const over = held - to.webhooks.activeWebhooks;
    if (over > 0)
      words.push(
        `You have ${count(held, 'webhook', 'webhooks')} and ${to.displayName} allows ${to.webhooks.activeWebhooks.toLocaleString('en-US')} active: at least ${count(over, 'webhook', 'webhooks')} will be paused.`,
      );
    const addresses = usage?.account_addresses ?? 0;
    if (addresses > to.webhooks.addressesPerAccount)
      words.push(
        `Your webhooks watch ${count(addresses, 'address', 'addresses')} and ${to.displayName} allows ${to.webhooks.addressesPerAccount.toLocaleString('en-US')} across the account: more of them may be paused.`,
      );
  } else if (from && to.rank > from.rank) {
    words.push('Webhooks paused by the plan limits resume, newest first, as far as it allows.');
  }
  return words;
}

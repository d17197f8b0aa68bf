import { balanceChangedId, type BalanceStateChanged, type PlanCaps } from '@meridian/contracts';
import { PLANS, limitsForPlan, webhookCapsFor } from '@meridian/plans';
import { isExhausted } from '../ledger/ledger-math';
import type { BalanceRow } from '../ledger/ledger.repository';

type CapsInput = Pick<BalanceRow, 'planId' | 'contract' | 'nodeOwner'>;

/**
 * Caps of an account. Without a plan (a team that has not picked one) node access keeps the
 * Free plan's rate and token count (it may still spend purchased CU), webhooks get none unless
 * the account owns a node (Free's caps then) and audit has no access.
 */
export function capsOf({ planId, contract, nodeOwner }: CapsInput): PlanCaps {
  const limits = planId ? limitsForPlan(planId, contract ?? undefined) : undefined;
  const webhooks = webhookCapsFor({ plan: planId, nodeOwner, overrides: contract ?? undefined });
  return {
    nodeRps: limits?.nodeRps ?? PLANS.free.nodeRps,
    accessTokens: limits?.accessTokens ?? PLANS.free.accessTokens,
    webhooks: {
      activeWebhooks: webhooks.activeWebhooks,
      addressesPerWebhook: webhooks.addressesPerWebhook,
      addressesPerAccount: webhooks.addressesPerAccount,
      eventsPerSecond: webhooks.eventsPerSecond,
      eventsBurst: webhooks.eventsBurst,
      inlineAddresses: webhooks.inlineAddresses,
      listRefs: webhooks.listRefs,
      addressLists: webhooks.addressLists,
      addressesPerList: webhooks.addressesPerList,
    },
    audit: {
      checksPerPeriod: limits?.audit.checksPerDay ?? 0,
      requestsPerSecond: limits?.audit.requestsPerSecond ?? 0,
    },
  };
}

/** CU granted per allowance period by the account's plan (0 without a plan). */
export function allowanceOf({ planId, contract }: Pick<BalanceRow, 'planId' | 'contract'>): number {
  return planId ? limitsForPlan(planId, contract ?? undefined).allowance.cu : 0;
}

/** The balance-state event / KV value of one account version. */
export function balanceStateOf(row: BalanceRow, now: Date): BalanceStateChanged {
  const exhausted = isExhausted(row);
  return {
    id: balanceChangedId(row.accountId, row.version),
    accountId: row.accountId,
    version: row.version,
    state: exhausted ? 'exhausted' : 'ok',
    exhaustedSince: exhausted ? (row.exhaustedSince ?? now).toISOString() : null,
    allowanceCu: row.allowance,
    purchasedCu: row.purchased,
    pendingTopUpCu: row.pending,
    allowanceResetsAt: row.periodEnd?.toISOString() ?? null,
    planId: row.planId,
    accountType: row.accountType,
    nodeOwner: row.nodeOwner,
    caps: capsOf(row),
    at: now.toISOString(),
  };
}

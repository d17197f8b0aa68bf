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

/** Caps as JSON per (plan, node owner) of accounts without a contract: the same for all of them. */
const capsJsonByPlan = new Map<string, string>();

function capsJson(row: CapsInput): string {
  if (row.contract !== null) return JSON.stringify(capsOf(row));
  const key = `${row.planId}:${row.nodeOwner}`;
  let json = capsJsonByPlan.get(key);
  if (json === undefined) capsJsonByPlan.set(key, (json = JSON.stringify(capsOf(row))));
  return json;
}

/**
 * `JSON.stringify(balanceStateOf(row, now))`, byte for byte, with the caps of a plan serialized
 * once: at a fleet's shape the publisher writes ~10,000 of these a second, and the caps (half of
 * each value) are the same for every account of a plan without a contract.
 */
export function balanceStateJson(row: BalanceRow, now: Date): string {
  const exhausted = isExhausted(row);
  const at = now.toISOString();
  const since = exhausted ? (row.exhaustedSince?.toISOString() ?? at) : null;
  const resets = row.periodEnd?.toISOString() ?? null;
  const accountId = JSON.stringify(row.accountId);
  return (
    `{"id":${JSON.stringify(balanceChangedId(row.accountId, row.version))},"accountId":${accountId},` +
    `"version":${row.version},"state":"${exhausted ? 'exhausted' : 'ok'}",` +
    `"exhaustedSince":${since === null ? 'null' : `"${since}"`},` +
    `"allowanceCu":${row.allowance},"purchasedCu":${row.purchased},"pendingTopUpCu":${row.pending},` +
    `"allowanceResetsAt":${resets === null ? 'null' : `"${resets}"`},` +
    `"planId":${JSON.stringify(row.planId)},"accountType":${JSON.stringify(row.accountType)},` +
    `"nodeOwner":${row.nodeOwner},"caps":${capsJson(row)},"at":"${at}"}`
  );
}

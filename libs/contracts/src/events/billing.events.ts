import { z } from 'zod';
import {
  accountId,
  count,
  cu,
  idempotencyId,
  isoTimestamp,
  networkKey,
  signedCu,
  tokenString,
} from './common.schema';

const window = {
  /** Producer instance (pod name / hostname + pid): ids stay unique across replicas. */
  producerId: tokenString,
  windowStart: isoTimestamp,
  windowEnd: isoTimestamp,
};

function totalMatches(u: { items: { cu: number }[]; totalCu: number }): boolean {
  return u.items.reduce((sum, item) => sum + item.cu, 0) === u.totalCu;
}

/** One account's node calls during one flush window of one rpc-gateway replica. */
export const NodeUsageSchema = z.object({
  id: idempotencyId,
  kind: z.literal('node'),
  accountId,
  ...window,
  items: z
    .array(z.object({ network: networkKey, method: z.string().min(1).max(128), calls: count, cu }))
    .min(1),
  totalCu: cu,
});

/** One account's delivery attempts (25 CU each) during one window of one delivery-worker. */
export const DeliveryUsageSchema = z.object({
  id: idempotencyId,
  kind: z.literal('webhook_delivery'),
  accountId,
  ...window,
  items: z.array(z.object({ webhookId: tokenString, attempts: count, cu })).min(1),
  totalCu: cu,
});

/**
 * `billing.usage.recorded.v1.<account>`: metered CU, one account per message. Superseded by
 * `UsageFlushed` (ADR 0103); billing-ledger still applies it so producers can be upgraded after it. billing-ledger applies each id exactly
 * once (the stream drops repeats within its duplicate window; the ledger keeps applied ids).
 * id = `<producerId>:<accountId>:<windowStart>` (usageId).
 */
export const UsageRecordedSchema = z
  .discriminatedUnion('kind', [NodeUsageSchema, DeliveryUsageSchema])
  .refine(totalMatches, 'totalCu must equal the sum of items[].cu');
export type UsageRecorded = z.infer<typeof UsageRecordedSchema>;
export type NodeUsage = z.infer<typeof NodeUsageSchema>;
export type DeliveryUsage = z.infer<typeof DeliveryUsageSchema>;

export function usageId(producerId: string, account: string, windowStart: string): string {
  return `${producerId}:${account}:${windowStart}`;
}

/**
 * Fleet usage (ADR 0103): one message per producer flush carries every account's usage of that
 * window, so a producer publishes a handful of messages a second however many accounts are busy
 * (the per-account `UsageRecorded` above cost one awaited publish per account per second, and
 * the ledger one journal per message). A flush larger than `USAGE_FLUSH_PART_BYTES` is split
 * into parts; each part is a message of its own with id `<producerId>:<windowStart>:<part>`
 * (usageFlushId), applied exactly once by billing-ledger. Accounts are not split across parts.
 */
export const NodeAccountUsageSchema = NodeUsageSchema.pick({
  kind: true,
  accountId: true,
  items: true,
  totalCu: true,
});
export const DeliveryAccountUsageSchema = DeliveryUsageSchema.pick({
  kind: true,
  accountId: true,
  items: true,
  totalCu: true,
});
export const AccountUsageSchema = z
  .discriminatedUnion('kind', [NodeAccountUsageSchema, DeliveryAccountUsageSchema])
  .refine(totalMatches, 'totalCu must equal the sum of items[].cu');
export type AccountUsage = z.infer<typeof AccountUsageSchema>;
export type NodeAccountUsage = z.infer<typeof NodeAccountUsageSchema>;
export type DeliveryAccountUsage = z.infer<typeof DeliveryAccountUsageSchema>;

/**
 * A part's serialized size stays below this. 256 KiB: a quarter of the BILLING stream's
 * `maxMsgSize` (1 MiB, the NATS default max_payload), so a part always fits with room for
 * headers; about 2,000 accounts with a few methods each, which keeps one part's ledger
 * transaction short (the ledger groups parts, ADR 0104) and a redelivery cheap; and few enough
 * parts that a 10,000-account flush is 5-10 messages.
 */
export const USAGE_FLUSH_PART_BYTES = 256 * 1024;

/**
 * No account twice with the same kind. A set per kind, not one of `${kind}|${accountId}` strings:
 * a part has ~2,000 accounts and billing-ledger validates ~40 parts a second (ADR 0104).
 */
function oncePerKind(f: { accounts: ReadonlyArray<{ kind: string; accountId: string }> }) {
  const seen = new Map<string, Set<string>>();
  for (const { kind, accountId } of f.accounts) {
    let ids = seen.get(kind);
    if (ids === undefined) seen.set(kind, (ids = new Set()));
    if (ids.has(accountId)) return false;
    ids.add(accountId);
  }
  return true;
}

/** `billing.usage.flushed.v1.<producerId>`: one part of one producer's flush. */
export const UsageFlushedSchema = z
  .object({
    id: idempotencyId,
    /** Producer instance (pod name / hostname + pid + start): unique across the fleet. */
    producerId: tokenString,
    windowStart: isoTimestamp,
    windowEnd: isoTimestamp,
    /** 0-based part of this flush, and how many parts it has. */
    part: count,
    parts: z.number().int().min(1),
    accounts: z.array(AccountUsageSchema).min(1),
  })
  .refine((f) => f.part < f.parts, 'part must be below parts')
  .refine(
    (f) => f.id === usageFlushId(f.producerId, f.windowStart, f.part),
    'id must be <producerId>:<windowStart>:<part>',
  )
  .refine(oncePerKind, 'an account appears once per kind in a part');
export type UsageFlushed = z.infer<typeof UsageFlushedSchema>;

export function usageFlushId(producerId: string, windowStart: string, part: number): string {
  return `${producerId}:${windowStart}:${part}`;
}

export const AccountTypeSchema = z.enum(['individual', 'team']);
export const BalanceStatusSchema = z.enum(['ok', 'exhausted']);
export type BalanceStatus = z.infer<typeof BalanceStatusSchema>;

/** Limits of the account's plan (or contract), already resolved by billing-ledger. */
export const PlanCapsSchema = z.object({
  nodeRps: count,
  accessTokens: count,
  webhooks: z.object({
    activeWebhooks: count,
    addressesPerWebhook: count,
    addressesPerAccount: count,
    eventsPerSecond: count,
    eventsBurst: count,
    inlineAddresses: count,
    listRefs: count,
    addressLists: count,
    addressesPerList: count,
  }),
  audit: z.object({
    /** Audit checks per period; 0 = no audit access. */
    checksPerPeriod: count,
    requestsPerSecond: count,
  }),
});
export type PlanCaps = z.infer<typeof PlanCapsSchema>;

/**
 * `billing.balance.changed.v1.<account>` and the value of the billing-balance-state KV bucket
 * (key: account id). `version` increases with every change of the account; a reader keeps the
 * highest version it has seen (events and KV may arrive in either order).
 * id = `<accountId>:balance:<version>` (balanceChangedId).
 */
export const BalanceStateChangedSchema = z
  .object({
    id: idempotencyId,
    accountId,
    version: z.number().int().min(1),
    state: BalanceStatusSchema,
    /** When the balance reached zero; null while ok. */
    exhaustedSince: isoTimestamp.nullable(),
    allowanceCu: signedCu,
    purchasedCu: signedCu,
    pendingTopUpCu: cu,
    allowanceResetsAt: isoTimestamp.nullable(),
    /** null: team account without a plan. */
    planId: tokenString.nullable(),
    accountType: AccountTypeSchema,
    nodeOwner: z.boolean(),
    caps: PlanCapsSchema,
    at: isoTimestamp,
  })
  .refine(
    (s) => (s.state === 'exhausted') === (s.exhaustedSince !== null),
    'exhaustedSince is set exactly when state is exhausted',
  );
export type BalanceStateChanged = z.infer<typeof BalanceStateChangedSchema>;

export function balanceChangedId(account: string, version: number): string {
  return `${account}:balance:${version}`;
}

/**
 * `billing.plan.changed.v1.<account>`: webhook-matcher pauses (downgrade) or resumes (upgrade)
 * webhooks newest first. id = `<accountId>:plan:<version>` (planChangedId); the version is the
 * account version shared with balance changes.
 */
export const PlanChangedSchema = z.object({
  id: idempotencyId,
  accountId,
  version: z.number().int().min(1),
  oldPlanId: tokenString.nullable(),
  newPlanId: tokenString.nullable(),
  caps: PlanCapsSchema,
  at: isoTimestamp,
});
export type PlanChanged = z.infer<typeof PlanChangedSchema>;

export function planChangedId(account: string, version: number): string {
  return `${account}:plan:${version}`;
}

export const CredentialTypeSchema = z.enum(['access_token', 'api_key']);
export type CredentialType = z.infer<typeof CredentialTypeSchema>;

/**
 * `billing.credential.revoked.v1.<account>` and the value of the billing-revoked-credentials KV
 * bucket (key: revokedCredentialKey(type, hash)). Caches evict the credential on sight.
 * id = `<credentialId>:revoked` (credentialRevokedId): a credential is revoked once.
 */
export const CredentialRevokedSchema = z.object({
  id: idempotencyId,
  accountId,
  credentialType: CredentialTypeSchema,
  credentialId: tokenString,
  /** sha256 of the secret, lower-case hex: what caches are keyed by. Never the secret. */
  credentialHash: z.string().regex(/^[0-9a-f]{64}$/, 'sha256 lower-case hex'),
  /** Network of an access token; absent for API keys. */
  network: networkKey.optional(),
  reason: z.enum(['rolled', 'deleted', 'revoked']),
  at: isoTimestamp,
});
export type CredentialRevoked = z.infer<typeof CredentialRevokedSchema>;

export function credentialRevokedId(credentialId: string): string {
  return `${credentialId}:revoked`;
}

/** `billing.topup.cleared.v1.<account>`: purchased CU became spendable. id = `<topUpId>:cleared`. */
export const TopUpClearedSchema = z.object({
  id: idempotencyId,
  accountId,
  topUpId: tokenString,
  cu,
  /** Purchased CU after the top-up was added. */
  purchasedCuAfter: signedCu,
  clearedAt: isoTimestamp,
});
export type TopUpCleared = z.infer<typeof TopUpClearedSchema>;

export function topUpClearedId(topUpId: string): string {
  return `${topUpId}:cleared`;
}

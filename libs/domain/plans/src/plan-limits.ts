import { DomainError } from '@meridian/errors';
import { BURST_FACTOR, NO_PLAN_WEBHOOK_CAPS, PLANS } from './plan.table';
import {
  PLAN_IDS,
  type AuditQuota,
  type PlanId,
  type PlanLimits,
  type PlanOrNone,
  type WebhookCaps,
} from './plan.types';

/** Numbers an Enterprise contract may set; anything left out keeps the Premium default. */
export interface ContractOverrides {
  readonly allowanceCu?: number;
  readonly nodeRps?: number;
  readonly accessTokens?: number;
  /** eventsBurst follows 12 × eventsPerSecond unless the contract sets it too. */
  readonly webhooks?: Partial<WebhookCaps>;
  readonly audit?: Partial<AuditQuota>;
}

const planSet: ReadonlySet<string> = new Set(PLAN_IDS);

export function isPlanId(value: unknown): value is PlanId {
  return typeof value === 'string' && planSet.has(value);
}

function checkCount(name: string, value: number | undefined): void {
  if (value !== undefined && !(Number.isSafeInteger(value) && value >= 0)) {
    throw new DomainError(
      'invalid_contract_overrides',
      'invalid',
      `${name} must be a non-negative integer`,
      {
        details: { field: name, value },
      },
    );
  }
}

function validate(overrides: ContractOverrides): void {
  checkCount('allowanceCu', overrides.allowanceCu);
  checkCount('nodeRps', overrides.nodeRps);
  checkCount('accessTokens', overrides.accessTokens);
  for (const [key, value] of Object.entries(overrides.webhooks ?? {}))
    checkCount(`webhooks.${key}`, value);
  for (const [key, value] of Object.entries(overrides.audit ?? {}))
    checkCount(`audit.${key}`, value);
}

/**
 * Limits of a plan. Contract overrides apply to Enterprise only; for other plans they are
 * ignored, because an account that moved off Enterprise may still carry its old contract row.
 */
export function limitsForPlan(plan: PlanId, overrides?: ContractOverrides): PlanLimits {
  const base = PLANS[plan];
  if (plan !== 'enterprise' || overrides === undefined) return base;
  validate(overrides);
  const webhookOverrides = overrides.webhooks ?? {};
  const eventsPerSecond = webhookOverrides.eventsPerSecond ?? base.webhooks.eventsPerSecond;
  return Object.freeze({
    ...base,
    allowance: { ...base.allowance, cu: overrides.allowanceCu ?? base.allowance.cu },
    nodeRps: overrides.nodeRps ?? base.nodeRps,
    accessTokens: overrides.accessTokens ?? base.accessTokens,
    webhooks: Object.freeze({
      ...base.webhooks,
      ...webhookOverrides,
      eventsPerSecond,
      eventsBurst: webhookOverrides.eventsBurst ?? eventsPerSecond * BURST_FACTOR,
    }),
    audit: Object.freeze({ ...base.audit, ...overrides.audit }),
  });
}

export interface WebhookCapsInput {
  readonly plan: PlanOrNone;
  /** Owns a dedicated or limitless node. */
  readonly nodeOwner?: boolean;
  readonly overrides?: ContractOverrides;
}

/**
 * Webhook caps of an account. The spec gives node owners "the Free plan webhook limits"; we read
 * that as a floor, so a node owner who also pays for a shared plan keeps that plan's higher caps.
 */
export function webhookCapsFor({
  plan,
  nodeOwner = false,
  overrides,
}: WebhookCapsInput): WebhookCaps {
  if (plan === null) return nodeOwner ? PLANS.free.webhooks : NO_PLAN_WEBHOOK_CAPS;
  return limitsForPlan(plan, overrides).webhooks;
}

/** Whether creating a webhook must be refused with 403 plan_required. */
export function isPlanRequired({ plan, nodeOwner = false }: WebhookCapsInput): boolean {
  return plan === null && !nodeOwner;
}

/** -1 for no plan, so any plan is an upgrade from none. */
export function planRank(plan: PlanOrNone): number {
  return plan === null ? -1 : PLANS[plan].rank;
}

/** Negative when a ranks below b, 0 when equal, positive when above (usable with Array.sort). */
export function comparePlans(a: PlanOrNone, b: PlanOrNone): number {
  return planRank(a) - planRank(b);
}

export function isUpgrade(from: PlanOrNone, to: PlanOrNone): boolean {
  return comparePlans(to, from) > 0;
}

export function isDowngrade(from: PlanOrNone, to: PlanOrNone): boolean {
  return comparePlans(to, from) < 0;
}

/** The 409 code for each cap (COMPAT "409 plan codes"); body size is 413 request_too_large instead. */
export const CAP_CODES = Object.freeze({
  activeWebhooks: 'cap_active_webhooks_exceeded',
  addressesPerWebhook: 'cap_addresses_exceeded',
  addressesPerAccount: 'cap_account_addresses_exceeded',
  inlineAddresses: 'cap_inline_addresses_exceeded',
  listRefs: 'cap_list_refs_exceeded',
  addressesPerList: 'cap_addresses_per_list_exceeded',
  addressLists: 'cap_address_lists_exceeded',
} as const satisfies Partial<Record<keyof WebhookCaps, string>>);

export type CapName = keyof typeof CAP_CODES;

/** Each cap as the API names it (`GET /webhooks/limits` `caps`, a 409's `cap`): snake_case. */
export const CAP_API_NAMES = Object.freeze({
  activeWebhooks: 'active_webhooks',
  addressesPerWebhook: 'addresses_per_webhook',
  addressesPerAccount: 'addresses_per_account',
  inlineAddresses: 'inline_addresses',
  listRefs: 'list_refs',
  addressesPerList: 'addresses_per_list',
  addressLists: 'address_lists',
} as const satisfies Record<CapName, string>);

/** The DomainError a service throws when a request would go past a cap. */
export function capExceeded(cap: CapName, limit: number, requested: number): DomainError {
  const name = CAP_API_NAMES[cap];
  return new DomainError(
    CAP_CODES[cap],
    'conflict',
    `plan limit ${name} (${limit}) would be exceeded`,
    {
      details: { cap: name, limit, requested },
    },
  );
}

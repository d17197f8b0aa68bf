export const PLAN_IDS = [
  'free',
  'starter',
  'growth',
  'advanced',
  'scale',
  'pro',
  'premium',
  'enterprise',
] as const;

export type PlanId = (typeof PLAN_IDS)[number];

/** A team account may have no plan (null): it can hold a balance but not create webhooks. */
export type PlanOrNone = PlanId | null;

export interface CuAllowance {
  /** CU granted per period; never rolls over (purchased top-ups do, and are tracked elsewhere). */
  readonly cu: number;
  readonly period: 'day' | 'month';
}

/** Webhook caps; names follow COMPAT's `GET /webhooks/limits` `caps` object. */
export interface WebhookCaps {
  readonly activeWebhooks: number;
  readonly addressesPerWebhook: number;
  readonly addressesPerAccount: number;
  readonly eventsPerSecond: number;
  /** Token-bucket size: always 12 × eventsPerSecond (spec "Plan limits for webhooks" rule 4). */
  readonly eventsBurst: number;
  readonly addressLists: number;
  readonly listRefs: number;
  readonly inlineAddresses: number;
  readonly addressesPerList: number;
  readonly maxBodyBytes: number;
}

export interface AuditQuota {
  /** Audit checks (any of the three products) per daily window (07:30 UTC reset). */
  readonly checksPerDay: number;
  readonly requestsPerSecond: number;
}

export interface PlanLimits {
  readonly plan: PlanId;
  readonly displayName: string;
  /** Position on the upgrade ladder; higher is bigger. */
  readonly rank: number;
  readonly allowance: CuAllowance;
  readonly nodeRps: number;
  readonly accessTokens: number;
  readonly webhooks: WebhookCaps;
  readonly audit: AuditQuota;
}

import type { AuditQuota, PlanId, PlanLimits, WebhookCaps } from './plan.types';

export const BURST_FACTOR = 12;
export const MIB = 1024 * 1024;

/** Caps the spec sets for every plan (rule 5 of "Plan limits for webhooks"). */
export const EVERY_PLAN_WEBHOOK_CAPS = Object.freeze({
  addressLists: 50,
  listRefs: 10,
  inlineAddresses: 1_000,
  addressesPerList: 100_000,
  maxBodyBytes: 5 * MIB,
});

const webhookCaps = (
  activeWebhooks: number,
  addressesPerWebhook: number,
  addressesPerAccount: number,
  eventsPerSecond: number,
): WebhookCaps =>
  Object.freeze({
    activeWebhooks,
    addressesPerWebhook,
    addressesPerAccount,
    eventsPerSecond,
    eventsBurst: eventsPerSecond * BURST_FACTOR,
    ...EVERY_PLAN_WEBHOOK_CAPS,
  });

const audit = (checksPerDay: number, requestsPerSecond: number): AuditQuota =>
  Object.freeze({ checksPerDay, requestsPerSecond });

const plan = (limits: PlanLimits): PlanLimits => Object.freeze(limits);

/**
 * One row per plan: CU allowance, node RPS and access tokens from COMPAT's plan table; webhook
 * caps from the spec's plan table. The audit quota is ours (COMPAT: audit is not metered in CU;
 * Free gets 5 checks a day); paid values scale roughly with the plan price.
 */
export const PLANS: Readonly<Record<PlanId, PlanLimits>> = Object.freeze({
  free: plan({
    plan: 'free',
    displayName: 'Free',
    rank: 0,
    allowance: { cu: 50_000, period: 'day' },
    nodeRps: 20,
    accessTokens: 2,
    webhooks: webhookCaps(1, 10, 10, 1),
    audit: audit(5, 1),
  }),
  starter: plan({
    plan: 'starter',
    displayName: 'Starter',
    rank: 1,
    allowance: { cu: 90_000_000, period: 'month' },
    nodeRps: 250,
    accessTokens: 30,
    webhooks: webhookCaps(10, 100_000, 100_000, 5),
    audit: audit(100, 2),
  }),
  growth: plan({
    plan: 'growth',
    displayName: 'Growth',
    rank: 2,
    allowance: { cu: 185_000_000, period: 'month' },
    nodeRps: 300,
    accessTokens: 45,
    webhooks: webhookCaps(25, 100_000, 250_000, 10),
    audit: audit(250, 5),
  }),
  advanced: plan({
    plan: 'advanced',
    displayName: 'Advanced',
    rank: 3,
    allowance: { cu: 385_000_000, period: 'month' },
    nodeRps: 450,
    accessTokens: 75,
    webhooks: webhookCaps(25, 100_000, 250_000, 10),
    audit: audit(500, 5),
  }),
  scale: plan({
    plan: 'scale',
    displayName: 'Scale',
    rank: 4,
    allowance: { cu: 700_000_000, period: 'month' },
    nodeRps: 600,
    accessTokens: 105,
    webhooks: webhookCaps(50, 250_000, 1_000_000, 20),
    audit: audit(1_000, 10),
  }),
  pro: plan({
    plan: 'pro',
    displayName: 'Pro',
    rank: 5,
    allowance: { cu: 1_000_000_000, period: 'month' },
    nodeRps: 800,
    accessTokens: 150,
    webhooks: webhookCaps(75, 250_000, 1_000_000, 30),
    audit: audit(2_500, 15),
  }),
  premium: plan({
    plan: 'premium',
    displayName: 'Premium',
    rank: 6,
    allowance: { cu: 1_600_000_000, period: 'month' },
    nodeRps: 800,
    accessTokens: 225,
    webhooks: webhookCaps(100, 250_000, 1_000_000, 50),
    audit: audit(5_000, 20),
  }),
  // Defaults only: the contract may override any number (see limitsForPlan).
  enterprise: plan({
    plan: 'enterprise',
    displayName: 'Enterprise',
    rank: 7,
    allowance: { cu: 1_600_000_000, period: 'month' },
    nodeRps: 800,
    accessTokens: 225,
    webhooks: webhookCaps(100, 250_000, 1_000_000, 50),
    audit: audit(5_000, 20),
  }),
});

/**
 * A team account without a plan: nothing can be created, so `GET /webhooks/limits` shows zeros
 * next to `plan_required: true`. Callers answer 403 plan_required before checking any cap.
 */
export const NO_PLAN_WEBHOOK_CAPS: WebhookCaps = webhookCaps(0, 0, 0, 0);

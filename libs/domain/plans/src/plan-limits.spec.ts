import { isDomainError } from '@meridian/errors';
import { NO_PLAN_WEBHOOK_CAPS, PLANS } from './plan.table';
import {
  CAP_CODES,
  capExceeded,
  comparePlans,
  isDowngrade,
  isPlanId,
  isPlanRequired,
  isUpgrade,
  limitsForPlan,
  planRank,
  webhookCapsFor,
} from './plan-limits';
import type { PlanOrNone } from './plan.types';

describe('limitsForPlan', () => {
  it('Enterprise without a contract is Premium', () => {
    const enterprise = limitsForPlan('enterprise');
    const { plan: _a, displayName: _b, rank: _c, ...premium } = PLANS.premium;
    expect(enterprise).toMatchObject(premium);
  });

  it('applies contract overrides to Enterprise', () => {
    const limits = limitsForPlan('enterprise', {
      allowanceCu: 5_000_000_000,
      nodeRps: 2_000,
      webhooks: { activeWebhooks: 500, eventsPerSecond: 200 },
      audit: { checksPerDay: 100_000 },
    });
    expect(limits.allowance).toEqual({ cu: 5_000_000_000, period: 'month' });
    expect(limits.nodeRps).toBe(2_000);
    expect(limits.accessTokens).toBe(225);
    expect(limits.webhooks.activeWebhooks).toBe(500);
    expect(limits.webhooks.eventsPerSecond).toBe(200);
    expect(limits.webhooks.eventsBurst).toBe(2_400);
    expect(limits.webhooks.addressesPerAccount).toBe(1_000_000);
    expect(limits.audit).toEqual({ checksPerDay: 100_000, requestsPerSecond: 20 });
    expect(PLANS.enterprise.nodeRps).toBe(800);
  });

  it('keeps an explicit contract burst', () => {
    expect(
      limitsForPlan('enterprise', { webhooks: { eventsPerSecond: 10, eventsBurst: 15 } }).webhooks
        .eventsBurst,
    ).toBe(15);
  });

  it('ignores overrides for other plans', () => {
    expect(limitsForPlan('pro', { nodeRps: 9_999 })).toBe(PLANS.pro);
  });

  it.each([
    [{ nodeRps: -1 }],
    [{ accessTokens: 1.5 }],
    [{ allowanceCu: Number.NaN }],
    [{ webhooks: { activeWebhooks: -5 } }],
    [{ audit: { checksPerDay: Infinity } }],
  ])('rejects bad overrides %p', (overrides) => {
    let caught: unknown;
    try {
      limitsForPlan('enterprise', overrides);
    } catch (error) {
      caught = error;
    }
    expect(isDomainError(caught) && caught.code).toBe('invalid_contract_overrides');
  });
});

describe('webhookCapsFor', () => {
  it.each([
    [null, false, NO_PLAN_WEBHOOK_CAPS],
    [null, true, PLANS.free.webhooks],
    ['free', false, PLANS.free.webhooks],
    ['free', true, PLANS.free.webhooks],
    ['starter', false, PLANS.starter.webhooks],
    ['scale', true, PLANS.scale.webhooks],
    ['enterprise', false, PLANS.premium.webhooks],
  ] as const)('plan %p, node owner %p', (plan, nodeOwner, caps) => {
    expect(webhookCapsFor({ plan, nodeOwner })).toEqual(caps);
  });

  it('no plan allows no webhook', () => {
    expect(NO_PLAN_WEBHOOK_CAPS.activeWebhooks).toBe(0);
    expect(NO_PLAN_WEBHOOK_CAPS.eventsPerSecond).toBe(0);
  });

  it('passes Enterprise overrides through', () => {
    expect(
      webhookCapsFor({ plan: 'enterprise', overrides: { webhooks: { activeWebhooks: 1_000 } } })
        .activeWebhooks,
    ).toBe(1_000);
  });

  it.each([
    [null, false, true],
    [null, true, false],
    ['free', false, false],
  ] as const)('plan %p, node owner %p: plan_required %p', (plan, nodeOwner, expected) => {
    expect(isPlanRequired({ plan, nodeOwner })).toBe(expected);
  });
});

describe('plan ranking', () => {
  it.each([
    [null, 'free', true, false],
    ['free', 'starter', true, false],
    ['growth', 'advanced', true, false],
    ['premium', 'enterprise', true, false],
    ['pro', 'scale', false, true],
    ['starter', null, false, true],
    ['pro', 'pro', false, false],
    [null, null, false, false],
  ] as const)('%p → %p: upgrade %p, downgrade %p', (from, to, up, down) => {
    expect(isUpgrade(from, to)).toBe(up);
    expect(isDowngrade(from, to)).toBe(down);
  });

  it('sorts plans by rank', () => {
    const plans: PlanOrNone[] = ['pro', null, 'free', 'enterprise', 'growth'];
    expect([...plans].sort(comparePlans)).toEqual([null, 'free', 'growth', 'pro', 'enterprise']);
    expect(planRank(null)).toBe(-1);
  });

  it.each([
    ['free', true],
    ['enterprise', true],
    ['lite', false],
    ['Free', false],
    [null, false],
  ])('isPlanId(%p) = %p', (value, expected) => {
    expect(isPlanId(value)).toBe(expected);
  });
});

describe('cap codes', () => {
  it.each(Object.entries(CAP_CODES))('%s → 409 %s', (cap, code) => {
    const error = capExceeded(cap as keyof typeof CAP_CODES, 10, 11);
    expect(error.code).toBe(code);
    expect(error.kind).toBe('conflict');
    // Named as GET /webhooks/limits names it (snake_case), in the body and the message.
    const name = cap.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    expect(error.details).toEqual({ cap: name, limit: 10, requested: 11 });
    expect(error.message).toBe(`plan limit ${name} (10) would be exceeded`);
    expect(code.startsWith('cap_')).toBe(true);
  });
});

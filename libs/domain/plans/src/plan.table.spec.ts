import { MIB, PLANS } from './plan.table';
import { PLAN_IDS } from './plan.types';

describe('plan table', () => {
  it.each([
    // plan, CU, period, node RPS, tokens, active webhooks, addr/webhook, addr/account, events/s, burst
    ['free', 50_000, 'day', 20, 2, 1, 10, 10, 1, 12],
    ['starter', 90_000_000, 'month', 250, 30, 10, 100_000, 100_000, 5, 60],
    ['growth', 185_000_000, 'month', 300, 45, 25, 100_000, 250_000, 10, 120],
    ['advanced', 385_000_000, 'month', 450, 75, 25, 100_000, 250_000, 10, 120],
    ['scale', 700_000_000, 'month', 600, 105, 50, 250_000, 1_000_000, 20, 240],
    ['pro', 1_000_000_000, 'month', 800, 150, 75, 250_000, 1_000_000, 30, 360],
    ['premium', 1_600_000_000, 'month', 800, 225, 100, 250_000, 1_000_000, 50, 600],
    ['enterprise', 1_600_000_000, 'month', 800, 225, 100, 250_000, 1_000_000, 50, 600],
  ] as const)(
    '%s: %i CU per %s, %i RPS, %i tokens, webhooks %i/%i/%i at %i/s burst %i',
    (plan, cu, period, rps, tokens, active, perWebhook, perAccount, eps, burst) => {
      const limits = PLANS[plan];
      expect(limits.plan).toBe(plan);
      expect(limits.allowance).toEqual({ cu, period });
      expect(limits.nodeRps).toBe(rps);
      expect(limits.accessTokens).toBe(tokens);
      expect(limits.webhooks).toMatchObject({
        activeWebhooks: active,
        addressesPerWebhook: perWebhook,
        addressesPerAccount: perAccount,
        eventsPerSecond: eps,
        eventsBurst: burst,
      });
    },
  );

  it.each(PLAN_IDS)('%s carries the every-plan caps', (plan) => {
    expect(PLANS[plan].webhooks).toMatchObject({
      addressLists: 50,
      listRefs: 10,
      inlineAddresses: 1_000,
      addressesPerList: 100_000,
      maxBodyBytes: 5 * MIB,
    });
    expect(PLANS[plan].webhooks.eventsBurst).toBe(12 * PLANS[plan].webhooks.eventsPerSecond);
  });

  it('ranks follow the table order', () => {
    expect(PLAN_IDS.map((plan) => PLANS[plan].rank)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it('Free audits 5 addresses a day; paid quotas never shrink when moving up', () => {
    expect(PLANS.free.audit.checksPerDay).toBe(5);
    for (let i = 1; i < PLAN_IDS.length; i++) {
      const lower = PLANS[PLAN_IDS[i - 1]].audit;
      const higher = PLANS[PLAN_IDS[i]].audit;
      expect(higher.checksPerDay).toBeGreaterThanOrEqual(lower.checksPerDay);
      expect(higher.requestsPerSecond).toBeGreaterThanOrEqual(lower.requestsPerSecond);
    }
  });

  it('Free allowance covers about 2,000 delivery attempts (spec)', () => {
    expect(Math.floor(PLANS.free.allowance.cu / 25)).toBe(2_000);
  });
});

import { PLANS } from '@meridian/plans';
import { canChangePlan, isPlanId, planChangeWords, planRows } from './plan-choice';

describe('the Plan page (QA: "or upgrade" with no plan control)', () => {
  it('lists the plans of the one plan table with their limits, the current one marked, enterprise only when held', () => {
    const rows = planRows('starter');
    expect(rows.map((row) => row.id)).toEqual([
      'free',
      'starter',
      'growth',
      'advanced',
      'scale',
      'pro',
      'premium',
    ]);
    expect(rows.filter((row) => row.current).map((row) => row.id)).toEqual(['starter']);
    const free = rows[0]!;
    expect(free).toMatchObject({
      name: PLANS.free.displayName,
      allowance: `${PLANS.free.allowance.cu.toLocaleString('en-US')} CU a day`,
      nodeRps: PLANS.free.nodeRps,
      accessTokens: PLANS.free.accessTokens,
      activeWebhooks: PLANS.free.webhooks.activeWebhooks,
      addressesPerWebhook: PLANS.free.webhooks.addressesPerWebhook,
      addressesPerAccount: PLANS.free.webhooks.addressesPerAccount,
      auditChecksPerDay: PLANS.free.audit.checksPerDay,
    });
    expect(planRows('enterprise').at(-1)).toMatchObject({ id: 'enterprise', current: true });
  });

  it('offers a change to an owner with self-service billing, never on a contract', () => {
    expect(canChangePlan('self', 'free')).toBe(true);
    expect(canChangePlan('owner', 'free')).toBe(false);
    expect(canChangePlan('operator', 'free')).toBe(false);
    expect(canChangePlan('self', 'enterprise')).toBe(false);
    expect(isPlanId('growth')).toBe(true);
    expect(isPlanId('')).toBe(false);
  });

  it('a downgrade says webhooks over the new limits are paused, newest that fit stay, and how many at least', () => {
    expect(
      planChangeWords('starter', 'free', { active_webhooks: 4, account_addresses: 30 }),
    ).toEqual([
      'Your plan becomes Free now, for every user of the account.',
      "Webhooks over the Free plan's limits are paused (the newest that fit stay active), and access tokens over its 2 keep working but no new one can be made.",
      'You have 4 webhooks and Free allows 1 active: at least 3 webhooks will be paused.',
      'Your webhooks watch 30 addresses and Free allows 10 across the account: more of them may be paused.',
    ]);
    // Counts unknown (webhook-matcher not answering) or within the plan: the rule alone.
    expect(planChangeWords('starter', 'free', null)).toHaveLength(2);
    expect(
      planChangeWords('starter', 'free', { active_webhooks: 1, account_addresses: 2 }),
    ).toHaveLength(2);
  });

  it('an upgrade says paused webhooks resume', () => {
    expect(planChangeWords('free', 'growth', null)).toEqual([
      'Your plan becomes Growth now, for every user of the account.',
      'Webhooks paused by the plan limits resume, newest first, as far as it allows.',
    ]);
  });
});

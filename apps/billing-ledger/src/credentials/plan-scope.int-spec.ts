import { api, BillingHarness, bulkAccounts, type BillingApp } from '../testing/billing-harness';

interface Key {
  id: string;
  key: string;
  scopes: string[];
  error?: string;
  message?: string;
}

/**
 * ADR 0604 amendment "A scope of its own for plan changes": a dashboard member made a key with
 * the `account` scope and changed the account's plan through this API (billing knows keys, not
 * roles). `PUT /account/plan` now needs the `plan` scope, which a key grants only if it holds it.
 */
describe('billing-ledger: the plan scope (real Postgres, NATS)', () => {
  const h = new BillingHarness();
  let billing: BillingApp;

  beforeAll(async () => {
    await h.setup();
    billing = await h.start({ SELF_SERVICE_BILLING: 'true' });
  });
  afterAll(() => h.teardown());

  const make = (key: string, scopes: string[]) =>
    api<Key>(billing.url, 'POST', '/api/v1/api-keys', key, { name: 'k', scopes });
  const setPlan = (key: string, plan: string) =>
    api<{ plan: string; error?: string; message?: string }>(
      billing.url,
      'PUT',
      '/api/v1/account/plan',
      key,
      { plan },
    );

  it('an account key without plan gets 403 insufficient_scope naming plan and changes nothing; with plan, 200', async () => {
    const [account] = await bulkAccounts(billing.url, 1, 'plan-scope', 'free');
    const { key } = account!;

    // The operator's first key holds every scope, plan included.
    const listed = await api<{ items: Array<{ scopes: string[] }> }>(
      billing.url,
      'GET',
      '/api/v1/api-keys',
      key,
    );
    expect(listed.body.items[0]!.scopes).toEqual(['account', 'audit', 'plan', 'webhooks']);

    const accountOnly = await make(key, ['account']);
    expect([accountOnly.status, accountOnly.body.scopes]).toEqual([201, ['account']]);
    const refused = await setPlan(accountOnly.body.key, 'premium');
    expect([refused.status, refused.body.error]).toEqual([403, 'insufficient_scope']);
    expect(refused.body.message).toMatch(/plan scope/);
    // It still reads the account, whose plan is unchanged.
    const read = await api<{ plan: string }>(
      billing.url,
      'GET',
      '/api/v1/account',
      accountOnly.body.key,
    );
    expect([read.status, read.body.plan]).toEqual([200, 'free']);

    // A key holding account makes no plan key (a key mints only scopes it holds).
    const escalate = await make(accountOnly.body.key, ['account', 'plan']);
    expect([escalate.status, escalate.body.error]).toEqual([403, 'scope_not_held']);

    const withPlan = await make(key, ['account', 'plan']);
    expect([withPlan.status, withPlan.body.scopes]).toEqual([201, ['account', 'plan']]);
    const changed = await setPlan(withPlan.body.key, 'starter');
    expect([changed.status, changed.body.plan]).toEqual([200, 'starter']);
    // The plan scope needs the account API's own scope beside it (the route is the account's).
    const planOnly = await make(key, ['plan']);
    expect(planOnly.status).toBe(201);
    const alone = await setPlan(planOnly.body.key, 'free');
    expect([alone.status, alone.body.error]).toEqual([403, 'insufficient_scope']);
  });
});

import {
  api,
  BillingHarness,
  bulkAccounts,
  OPERATOR_TOKEN,
  type BillingApp,
} from '../testing/billing-harness';
import { accountResponse } from '../http/response.schemas';

interface Account {
  plan: string | null;
  self_service_billing: boolean;
  balance: { purchased_cu: number; pending_top_ups_cu?: number };
}

/**
 * QA: any account key could credit itself 10^12 CU or move itself to Premium. A deployment
 * (SELF_SERVICE_BILLING unset) lets only the operator grant CU and plans.
 */
describe('billing-ledger: top-ups and plan changes by the account only where the deployment allows it', () => {
  const h = new BillingHarness();
  let closed: BillingApp;
  let open: BillingApp;

  const newAccount = async (billing: BillingApp) =>
    (await bulkAccounts(billing.url, 1, 'Self-service', 'free'))[0]!;

  beforeAll(async () => {
    await h.setup();
    closed = await h.start({ SELF_SERVICE_BILLING: 'false' });
    open = await h.start({ SELF_SERVICE_BILLING: 'true' });
  });
  afterAll(() => h.teardown());

  it('off: the account route refuses top-ups and plan changes with 403 and records nothing', async () => {
    const { id, key } = await newAccount(closed);
    const before = await api<Account>(closed.url, 'GET', '/api/v1/account', key);
    expect(before.body.self_service_billing).toBe(false);
    expect(accountResponse.safeParse(before.body).error).toBeUndefined();

    const bought = await api<{ error: string }>(closed.url, 'POST', '/api/v1/top-ups', key, {
      cu: 1e12,
    });
    expect([bought.status, bought.body.error]).toEqual([403, 'self_service_disabled']);
    const upgraded = await api<{ error: string }>(closed.url, 'PUT', '/api/v1/account/plan', key, {
      plan: 'premium',
    });
    expect([upgraded.status, upgraded.body.error]).toEqual([403, 'self_service_disabled']);

    const after = await api<Account>(closed.url, 'GET', '/api/v1/account', key);
    expect(after.body.plan).toBe('free');
    expect(after.body.balance).toEqual(before.body.balance);
    const topUps = await api<{ items: unknown[] }>(closed.url, 'GET', '/api/v1/top-ups', key);
    expect(topUps.body.items).toEqual([]);

    // The operator (or the deployment's payment integration, through the operator API) still can.
    const credited = await api<{ source: string }>(
      closed.url,
      'POST',
      `/api/v1/admin/accounts/${id}/top-ups`,
      OPERATOR_TOKEN,
      { cu: 5_000 },
    );
    expect([credited.status, credited.body.source]).toEqual([201, 'operator']);
    const planned = await api<Account>(
      closed.url,
      'PUT',
      `/api/v1/admin/accounts/${id}/plan`,
      OPERATOR_TOKEN,
      { plan: 'starter' },
    );
    expect([planned.status, planned.body.plan]).toEqual([200, 'starter']);
  });

  it('on: the account buys its own top-ups and changes its own plan', async () => {
    const { key } = await newAccount(open);
    const account = await api<Account>(open.url, 'GET', '/api/v1/account', key);
    expect(account.body.self_service_billing).toBe(true);
    const bought = await api<{ source: string }>(open.url, 'POST', '/api/v1/top-ups', key, {
      cu: 1_000,
    });
    expect([bought.status, bought.body.source]).toEqual([201, 'account']);
    const upgraded = await api<Account>(open.url, 'PUT', '/api/v1/account/plan', key, {
      plan: 'starter',
    });
    expect([upgraded.status, upgraded.body.plan]).toEqual([200, 'starter']);
  });
});

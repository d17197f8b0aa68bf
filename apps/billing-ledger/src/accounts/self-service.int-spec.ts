import {
  api,
  BillingHarness,
  bulkAccounts,
  OPERATOR_TOKEN,
  type BillingApp,
} from '../testing/billing-harness';
import { accountResponse, topUpResponse, topUpsPage } from '../http/response.schemas';

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

  it('records who bought a top-up: named by the managed key, inherited from a key its maker made, none for a plain key or the operator (ADR 0604)', async () => {
    const made = await api<{ account: { id: string }; api_key: { id: string; key: string } }>(
      open.url,
      'POST',
      '/api/v1/admin/accounts',
      OPERATOR_TOKEN,
      { name: 'team@example.com', plan: 'free', api_key_managed: true },
    );
    const { id } = made.body.account;
    const managed = made.body.api_key;
    const buy = (key: string, body: Record<string, unknown>, idempotencyKey?: string) =>
      api<{ id: string; created_by: string | null; api_key_id: string | null; error?: string }>(
        open.url,
        'POST',
        '/api/v1/top-ups',
        key,
        body,
        idempotencyKey ? { 'idempotency-key': idempotencyKey } : undefined,
      );
    // The dashboard's managed key names the member it buys for.
    const carols = await buy(managed.key, { cu: 1_000, created_by: 'usr_c' }, 'carol-1');
    expect([carols.status, carols.body.created_by, carols.body.api_key_id]).toEqual([
      201,
      'usr_c',
      managed.id,
    ]);
    expect(topUpResponse.safeParse(carols.body).error).toBeUndefined();
    // A retry answers the same top-up; the key with another buyer is another request.
    expect((await buy(managed.key, { cu: 1_000, created_by: 'usr_c' }, 'carol-1')).body.id).toBe(
      carols.body.id,
    );
    const other = await buy(managed.key, { cu: 1_000, created_by: 'usr_b' }, 'carol-1');
    expect([other.status, other.body.error]).toEqual([409, 'idempotency_key_reused']);
    // A key Carol made buys as Carol; a key of no person buys as nobody and names nobody.
    const key = (created_by?: string) =>
      api<{ id: string; key: string }>(open.url, 'POST', '/api/v1/api-keys', managed.key, {
        scopes: ['account'],
        ...(created_by ? { created_by } : {}),
      });
    const carolsKey = (await key('usr_c')).body;
    const byHerKey = await buy(carolsKey.key, { cu: 2_000 });
    expect([byHerKey.status, byHerKey.body.created_by]).toEqual([201, 'usr_c']);
    const plainKey = (await key()).body;
    const byApi = await buy(plainKey.key, { cu: 3_000 });
    expect([byApi.status, byApi.body.created_by, byApi.body.api_key_id]).toEqual([
      201,
      null,
      plainKey.id,
    ]);
    const named = await buy(plainKey.key, { cu: 3_000, created_by: 'usr_x' });
    expect([named.status, named.body.error]).toEqual([403, 'created_by_not_allowed']);
    const credited = await api<{ source: string; created_by: string | null; api_key_id: null }>(
      open.url,
      'POST',
      `/api/v1/admin/accounts/${id}/top-ups`,
      OPERATOR_TOKEN,
      { cu: 5_000 },
    );
    expect([credited.body.source, credited.body.created_by, credited.body.api_key_id]).toEqual([
      'operator',
      null,
      null,
    ]);
    // Both lists carry it.
    for (const [path, bearer] of [
      ['/api/v1/top-ups', managed.key],
      [`/api/v1/admin/accounts/${id}/top-ups`, OPERATOR_TOKEN],
    ] as const) {
      const listed = await api<{ items: Array<{ cu: number; created_by: string | null }> }>(
        open.url,
        'GET',
        path,
        bearer,
      );
      expect(topUpsPage.safeParse(listed.body).error).toBeUndefined();
      expect(listed.body.items.map((item) => [item.cu, item.created_by])).toEqual([
        [5_000, null],
        [3_000, null],
        [2_000, 'usr_c'],
        [1_000, 'usr_c'],
      ]);
    }
  });
});

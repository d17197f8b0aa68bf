import { KvBuckets, type BalanceStateChanged } from '@meridian/contracts';
import { checkLedger } from '../ledger/ledger-check';
import { MAX_BULK_ACCOUNTS } from '../http/schemas';
import {
  api,
  BillingHarness,
  eventually,
  OPERATOR_TOKEN,
  type BillingApp,
} from '../testing/billing-harness';

interface Created {
  account: { id: string; name: string; type: string; plan: string | null; balance: unknown };
  api_key: { id: string; key: string; scopes: string[] };
}

describe('billing-ledger operator bulk account creation (real Postgres + NATS)', () => {
  const h = new BillingHarness();
  let billing: BillingApp;

  beforeAll(async () => {
    await h.setup();
    billing = await h.start();
  });
  afterAll(() => h.teardown());

  const accountCount = async (): Promise<number> =>
    Number((await h.dataSource.query('SELECT count(*) AS n FROM billing.accounts'))[0].n);

  it('creates accounts in input order, each with its first allowance, a working key and its balance state in KV', async () => {
    const response = await api<{ items: Created[] }>(
      billing.url,
      'POST',
      '/api/v1/admin/accounts/bulk',
      OPERATOR_TOKEN,
      {
        accounts: [
          { name: 'bulk-a', plan: 'starter' },
          { name: 'bulk-b' },
          { name: 'bulk-team', type: 'team', plan: null, api_key_scopes: ['audit'] },
        ],
      },
    );
    expect(response.status).toBe(201);
    const items = response.body.items;
    expect(items.map((i) => [i.account.name, i.account.type, i.account.plan])).toEqual([
      ['bulk-a', 'individual', 'starter'],
      ['bulk-b', 'individual', 'free'],
      ['bulk-team', 'team', null],
    ]);
    expect(items[2]!.api_key.scopes).toEqual(['audit']);
    expect(new Set(items.map((i) => i.api_key.key)).size).toBe(3);

    // Each initial key authenticates as its own account, which holds its plan's allowance.
    const [starter, free] = items;
    const me = await api<{ id: string; balance: { allowance_cu: number } }>(
      billing.url,
      'GET',
      '/api/v1/account',
      starter!.api_key.key,
    );
    expect(me.status).toBe(200);
    expect(me.body.id).toBe(starter!.account.id);
    expect(me.body.balance.allowance_cu).toBe(90_000_000);
    const freeMe = await api<{ id: string; balance: { allowance_cu: number } }>(
      billing.url,
      'GET',
      '/api/v1/account',
      free!.api_key.key,
    );
    expect(freeMe.body).toMatchObject({ id: free!.account.id, balance: { allowance_cu: 50_000 } });

    // The balance states go out like those of single creations.
    for (const item of items) {
      const state = await eventually(
        () => h.kvJson<BalanceStateChanged>(KvBuckets.balanceState.name, item.account.id),
        10_000,
        'balance state in KV',
      );
      expect(state.accountId).toBe(item.account.id);
    }
    const report = await checkLedger(h.dataSource);
    expect(report.unbalancedJournals).toEqual([]);
    expect(report.balanceMismatches).toEqual([]);
    expect(report.priorMismatches).toEqual([]);
    expect(report.total).toBe(0);
  });

  it('creates a full batch of MAX_BULK_ACCOUNTS in one request', async () => {
    const before = await accountCount();
    const response = await api<{ items: Created[] }>(
      billing.url,
      'POST',
      '/api/v1/admin/accounts/bulk',
      OPERATOR_TOKEN,
      {
        accounts: Array.from({ length: MAX_BULK_ACCOUNTS }, (_, i) => ({
          name: `many-${i}`,
          plan: 'starter',
        })),
      },
    );
    expect(response.status).toBe(201);
    expect(response.body.items.map((i) => i.account.name)).toEqual(
      Array.from({ length: MAX_BULK_ACCOUNTS }, (_, i) => `many-${i}`),
    );
    expect(await accountCount()).toBe(before + MAX_BULK_ACCOUNTS);
    const report = await checkLedger(h.dataSource);
    expect(report.balanceMismatches).toEqual([]);
    expect(report.priorMismatches).toEqual([]);
    expect(report.unbalancedJournals).toEqual([]);
  });

  it('is all or nothing: one invalid item, too many items or no operator token create nothing', async () => {
    const before = await accountCount();
    const invalid = await api<{ error: string; message: string }>(
      billing.url,
      'POST',
      '/api/v1/admin/accounts/bulk',
      OPERATOR_TOKEN,
      { accounts: [{ name: 'ok' }, { name: 'individual-without-plan', plan: null }] },
    );
    expect(invalid.status).toBe(400);
    expect(invalid.body.error).toBe('malformed_body');
    expect(invalid.body.message).toContain('body.accounts[1].plan');

    const tooMany = await api<{ error: string }>(
      billing.url,
      'POST',
      '/api/v1/admin/accounts/bulk',
      OPERATOR_TOKEN,
      { accounts: Array.from({ length: MAX_BULK_ACCOUNTS + 1 }, (_, i) => ({ name: `x${i}` })) },
    );
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error).toBe('malformed_body');

    const empty = await api(billing.url, 'POST', '/api/v1/admin/accounts/bulk', OPERATOR_TOKEN, {
      accounts: [],
    });
    expect(empty.status).toBe(400);

    const unknownField = await api(
      billing.url,
      'POST',
      '/api/v1/admin/accounts/bulk',
      OPERATOR_TOKEN,
      { accounts: [{ name: 'a' }], extra: true },
    );
    expect(unknownField.status).toBe(400);

    const noToken = await api(billing.url, 'POST', '/api/v1/admin/accounts/bulk', undefined, {
      accounts: [{ name: 'a' }],
    });
    expect(noToken.status).toBe(401);
    expect(await accountCount()).toBe(before);
  });
});

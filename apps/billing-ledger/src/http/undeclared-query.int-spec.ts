import { NETWORK_KEYS } from '@meridian/networks';
import {
  BillingHarness,
  OPERATOR_TOKEN,
  api,
  bulkAccounts,
  type BillingApp,
} from '../testing/billing-harness';

type Answer = { error?: string; message?: string; items?: unknown[]; plan?: string };

/**
 * QA YY: the routes that declare no query ignored an unknown parameter (200) and the writes
 * carried it out (201, 200). One rule (platform-http UndeclaredQueryInterceptor): each is 400
 * invalid_query naming the parameter, after the guards and before the handler, so it writes
 * nothing.
 */
describe('billing-ledger: a route that declares no query takes none', () => {
  const h = new BillingHarness();
  let billing: BillingApp;
  let account: { id: string; key: string };

  beforeAll(async () => {
    await h.setup();
    billing = await h.start();
    [account] = await bulkAccounts(billing.url, 1, 'undeclared-query', 'free');
  });
  afterAll(() => h.teardown());

  const ask = (method: string, path: string, token: string | undefined, body?: unknown) =>
    api<Answer>(billing.url, method, path, token, body);
  const refusal = (answer: { status: number; body: Answer }, name: string) =>
    expect([answer.status, answer.body.error, answer.body.message]).toEqual([
      400,
      'invalid_query',
      `query: unknown parameter "${name}"`,
    ]);

  it.each([
    ['/api/v1/account?sort=1', 'account'],
    ['/api/v1/account/balance?sort=1', 'account'],
    ['/api/v1/admin/accounts/{id}?sort=1', 'operator'],
  ])('GET %s: 400 invalid_query (was 200)', async (path, who) => {
    const token = who === 'operator' ? OPERATOR_TOKEN : account.key;
    refusal(await ask('GET', path.replace('{id}', account.id), token), 'sort');
  });

  it('POST /top-ups?x=1: 400 invalid_query, no top-up made (was 201)', async () => {
    refusal(await ask('POST', '/api/v1/top-ups?x=1', account.key, { cu: 1 }), 'x');
    const listed = await ask('GET', '/api/v1/top-ups', account.key);
    expect([listed.status, listed.body.items]).toEqual([200, []]);
  });

  it('POST /admin/accounts/{id}/top-ups?x=1: 400 invalid_query, no top-up made (was 201)', async () => {
    const path = `/api/v1/admin/accounts/${account.id}/top-ups`;
    refusal(await ask('POST', `${path}?x=1`, OPERATOR_TOKEN, { cu: 1 }), 'x');
    const listed = await ask('GET', path, OPERATOR_TOKEN);
    expect([listed.status, listed.body.items]).toEqual([200, []]);
  });

  it('POST /access-tokens?x=1: 400 invalid_query, no token made (was 201)', async () => {
    const body = { network: NETWORK_KEYS[0] };
    refusal(await ask('POST', '/api/v1/access-tokens?x=1', account.key, body), 'x');
    const listed = await ask('GET', '/api/v1/access-tokens', account.key);
    expect([listed.status, listed.body.items]).toEqual([200, []]);
  });

  it('PUT /account/plan?x=1: 400 invalid_query, the plan unchanged (was 200)', async () => {
    refusal(await ask('PUT', '/api/v1/account/plan?x=1', account.key, { plan: 'starter' }), 'x');
    expect((await ask('GET', '/api/v1/account', account.key)).body.plan).toBe('free');
    // Without the parameter the same request is taken: the refusal was the parameter's.
    const changed = await ask('PUT', '/api/v1/account/plan', account.key, { plan: 'starter' });
    expect([changed.status, changed.body.plan]).toEqual([200, 'starter']);
  });

  it('after the guards: without credentials still 401, with a wrong operator token too', async () => {
    expect((await ask('GET', '/api/v1/account?sort=1', undefined)).status).toBe(401);
    const path = `/api/v1/admin/accounts/${account.id}/top-ups?x=1`;
    expect((await ask('POST', path, 'wrong', { cu: 1 })).status).toBe(401);
  });

  it('a route with a query still answers its own (limit), and the probes take any', async () => {
    const listed = await ask('GET', '/api/v1/top-ups?limit=5', account.key);
    expect(listed.status).toBe(200);
    refusal(await ask('GET', '/api/v1/top-ups?sort=1', account.key), 'sort');
    expect((await fetch(`${billing.url}/openapi.json?x=1`)).status).toBe(200);
  });
});

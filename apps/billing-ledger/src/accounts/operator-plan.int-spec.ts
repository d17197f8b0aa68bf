import { api, BillingHarness, OPERATOR_TOKEN, type BillingApp } from '../testing/billing-harness';

interface ErrorBody {
  error: string;
  message: string;
}

/** QA: a contract on a plan other than Enterprise, and refusals that said one thing twice. */
describe('billing-ledger: operator plans take a contract on Enterprise only; one message per refusal', () => {
  const h = new BillingHarness();
  let billing: BillingApp;

  beforeAll(async () => {
    await h.setup();
    billing = await h.start();
  });
  afterAll(() => h.teardown());

  const newAccount = async (body: Record<string, unknown> = {}) => {
    const created = await api<{ account: { id: string }; api_key: { key: string } }>(
      billing.url,
      'POST',
      '/api/v1/admin/accounts',
      OPERATOR_TOKEN,
      { name: 'plans', ...body },
    );
    expect(created.status).toBe(201);
    return { id: created.body.account.id, key: created.body.api_key.key };
  };

  it('refuses a contract with any plan but enterprise (400 contract_not_enterprise), changing nothing', async () => {
    const { id } = await newAccount({ plan: 'free' });
    const setPlan = (body: unknown) =>
      api<ErrorBody & { plan: string; caps: { node_rps: number } }>(
        billing.url,
        'PUT',
        `/api/v1/admin/accounts/${id}/plan`,
        OPERATOR_TOKEN,
        body,
      );
    const refused = await setPlan({ plan: 'starter', contract: { node_rps: 5 } });
    expect([refused.status, refused.body.error, refused.body.message]).toEqual([
      400,
      'contract_not_enterprise',
      'body.contract: a contract is only for the enterprise plan, not plan starter',
    ]);
    const account = await api<{ plan: string }>(
      billing.url,
      'GET',
      `/api/v1/admin/accounts/${id}`,
      OPERATOR_TOKEN,
    );
    expect(account.body.plan).toBe('free');
    // The same rule when an account is made, alone or in bulk.
    const made = await api<ErrorBody>(
      billing.url,
      'POST',
      '/api/v1/admin/accounts',
      OPERATOR_TOKEN,
      { name: 'x', plan: 'pro', contract: { node_rps: 5 } },
    );
    expect([made.status, made.body.error]).toEqual([400, 'contract_not_enterprise']);
    const bulk = await api<ErrorBody>(
      billing.url,
      'POST',
      '/api/v1/admin/accounts/bulk',
      OPERATOR_TOKEN,
      { accounts: [{ name: 'a' }, { name: 'b', type: 'team', plan: null, contract: {} }] },
    );
    expect([bulk.status, bulk.body.error, bulk.body.message]).toEqual([
      400,
      'contract_not_enterprise',
      'body.accounts[1].contract: a contract is only for the enterprise plan, not no plan',
    ]);
    // Enterprise takes it.
    const enterprise = await setPlan({ plan: 'enterprise', contract: { node_rps: 5 } });
    expect([enterprise.status, enterprise.body.plan, enterprise.body.caps.node_rps]).toEqual([
      200,
      'enterprise',
      5,
    ]);
  });

  it('says each refusal once: a top-up of 1e300 CU, a usage bound that is not a time, a page size of 1e300', async () => {
    const { key } = await newAccount();
    const topUp = await api<ErrorBody>(billing.url, 'POST', '/api/v1/top-ups', key, {
      cu: 1e300,
    });
    expect([topUp.status, topUp.body.error, topUp.body.message]).toEqual([
      400,
      'malformed_body',
      'body.cu: Too big: expected number to be <=1000000000000',
    ]);
    const usage = await api<ErrorBody>(
      billing.url,
      'GET',
      '/api/v1/account/usage?from=garbage',
      key,
    );
    expect([usage.status, usage.body.error, usage.body.message]).toEqual([
      400,
      'invalid_query',
      'query.from: Invalid ISO datetime',
    ]);
    const page = await api<ErrorBody>(billing.url, 'GET', '/api/v1/top-ups?limit=1e300', key);
    expect([page.status, page.body.error, page.body.message]).toEqual([
      400,
      'invalid_query',
      'query.limit: Too big: expected number to be <=200',
    ]);
    const contract = await api<ErrorBody>(
      billing.url,
      'POST',
      '/api/v1/admin/accounts',
      OPERATOR_TOKEN,
      { name: 'x', plan: 'enterprise', contract: { node_rps: 1e300 } },
    );
    expect([contract.status, contract.body.message]).toEqual([
      400,
      'body.contract.node_rps: Too big: expected int to be <=9007199254740991',
    ]);
  });
});

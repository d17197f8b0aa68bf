import { Events, type UsageRecorded } from '@meridian/contracts';
import {
  api,
  BillingHarness,
  eventually,
  nodeUsage,
  OPERATOR_TOKEN,
  type BillingApp,
} from '../testing/billing-harness';

interface Created {
  account: { id: string; name: string };
  api_key: { key: string };
}

interface Summary {
  id: string;
  name: string;
  type: string;
  plan: string | null;
  node_owner: boolean;
  created_at: string;
}

interface SummaryPage {
  items: Summary[];
  next_cursor: string | null;
}

/** The operator's reads: every account however it was made, found, opened, its usage and top-ups. */
describe('billing-ledger operator reads of accounts (real Postgres + NATS)', () => {
  const h = new BillingHarness();
  let billing: BillingApp;

  beforeAll(async () => {
    await h.setup();
    billing = await h.start();
  });
  afterAll(() => h.teardown());

  const asOperator = <T>(path: string) => api<T>(billing.url, 'GET', path, OPERATOR_TOKEN);

  const createOne = async (name: string) => {
    const created = await api<Created>(
      billing.url,
      'POST',
      '/api/v1/admin/accounts',
      OPERATOR_TOKEN,
      { name },
    );
    expect(created.status).toBe(201);
    return created.body;
  };

  it('finds accounts made one by one and in bulk, by name or id prefix, in keyset pages', async () => {
    const single = await createOne('Zeta single 100%_off');
    h.clock.advance(1_000);
    const bulk = await api<{ items: Created[] }>(
      billing.url,
      'POST',
      '/api/v1/admin/accounts/bulk',
      OPERATOR_TOKEN,
      {
        accounts: Array.from({ length: 5 }, (_, i) => ({
          name: `Zeta bulk ${i}`,
          plan: 'starter',
        })),
      },
    );
    expect(bulk.status).toBe(201);
    const bulkIds = bulk.body.items.map((item) => item.account.id);

    // Newest first: the bulk five (one created_at, so in descending id order), then the single.
    const all = await asOperator<SummaryPage>('/api/v1/admin/accounts?q=zeta');
    expect(all.status).toBe(200);
    expect(all.body.items.map((a) => a.id)).toEqual([
      ...[...bulkIds].sort().reverse(),
      single.account.id,
    ]);
    expect(all.body.items[0]).toEqual({
      id: expect.stringMatching(/^acc_/),
      name: expect.stringMatching(/^Zeta bulk/),
      type: 'individual',
      plan: 'starter',
      node_owner: false,
      created_at: '2026-01-05T10:00:01.000Z',
    });
    expect(all.body.next_cursor).toBeNull();

    // Pages of two walk the same order without repeating or skipping one.
    const walked: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; body: SummaryPage } = await asOperator<SummaryPage>(
        `/api/v1/admin/accounts?q=zeta&limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(page.status).toBe(200);
      expect(page.body.items.length).toBeLessThanOrEqual(2);
      walked.push(...page.body.items.map((a) => a.id));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(walked).toEqual(all.body.items.map((a) => a.id));

    // An id prefix finds its account; LIKE wildcards in the query are taken literally.
    const byId = await asOperator<SummaryPage>(
      `/api/v1/admin/accounts?q=${single.account.id.slice(0, 14)}`,
    );
    expect(byId.body.items.map((a) => a.id)).toEqual([single.account.id]);
    const literal = await asOperator<SummaryPage>(
      `/api/v1/admin/accounts?q=${encodeURIComponent('100%_off')}`,
    );
    expect(literal.body.items.map((a) => a.id)).toEqual([single.account.id]);
    const wildcard = await asOperator<SummaryPage>(
      `/api/v1/admin/accounts?q=${encodeURIComponent('zeta%bulk')}`,
    );
    expect(wildcard.body.items).toEqual([]);
  });

  it('answers 400 for a bad query and 401 to anything but the operator token', async () => {
    for (const query of ['cursor=12', 'limit=0', 'limit=201', 'sort=name']) {
      const answer = await asOperator<{ error: string }>(`/api/v1/admin/accounts?${query}`);
      expect([query, answer.status, answer.body.error]).toEqual([query, 400, 'invalid_query']);
    }
    const customer = await createOne('Customer with every scope');
    for (const path of [
      '/api/v1/admin/accounts',
      `/api/v1/admin/accounts/${customer.account.id}`,
      `/api/v1/admin/accounts/${customer.account.id}/usage`,
      `/api/v1/admin/accounts/${customer.account.id}/top-ups`,
    ]) {
      const answer = await api<{ error: string }>(billing.url, 'GET', path, customer.api_key.key);
      expect([path, answer.status, answer.body.error]).toEqual([path, 401, 'unauthorized']);
    }
  });

  it('opens one account with its balance, usage by day and network, and top-ups', async () => {
    const created = await createOne('Usage reader');
    const id = created.account.id;
    const credited = await api<{ id: string }>(
      billing.url,
      'POST',
      `/api/v1/admin/accounts/${id}/top-ups`,
      OPERATOR_TOKEN,
      { cu: 5_000 },
    );
    expect(credited.status).toBe(201);

    const delivery = nodeUsage(id, 75, '2026-01-06T09:00:00.000Z', 'dw-test');
    const events: UsageRecorded[] = [
      nodeUsage(id, 200, '2026-01-05T10:00:00.000Z'),
      {
        ...nodeUsage(id, 100, '2026-01-05T11:00:00.000Z'),
        kind: 'node',
        items: [{ network: 'polygon-mainnet', method: 'eth_call', calls: 5, cu: 100 }],
      },
      {
        id: delivery.id,
        kind: 'webhook_delivery',
        accountId: id,
        producerId: delivery.producerId,
        windowStart: delivery.windowStart,
        windowEnd: delivery.windowEnd,
        items: [{ webhookId: 'wh_aaaaaaaaaaaaaaaaaaaaaaaa', attempts: 3, cu: 75 }],
        totalCu: 75,
      },
    ];
    for (const event of events)
      await h.publisher.publishJson(Events.usageRecorded.subjectOf(event), event, event.id);
    await eventually(() => h.usageDrained(), 15_000, 'usage drained');

    const account = await asOperator<{
      id: string;
      plan: string;
      balance: Record<string, unknown>;
    }>(`/api/v1/admin/accounts/${id}`);
    expect(account.status).toBe(200);
    expect(account.body).toMatchObject({
      id,
      plan: 'free',
      balance: {
        pending_top_up_cu: 5_000,
        pending_top_ups: [expect.objectContaining({ id: credited.body.id, cu: 5_000 })],
      },
    });

    const range = 'from=2026-01-05T00:00:00Z&to=2026-01-07T00:00:00Z';
    const usage = await asOperator<Record<string, unknown>>(
      `/api/v1/admin/accounts/${id}/usage?group_by=day_network&${range}`,
    );
    expect(usage.status).toBe(200);
    expect(usage.body).toEqual({
      from: '2026-01-05T00:00:00.000Z',
      to: '2026-01-07T00:00:00.000Z',
      group_by: 'day_network',
      items: [
        { day: '2026-01-05', network: 'eth-mainnet', calls: 10, cu: 200 },
        { day: '2026-01-05', network: 'polygon-mainnet', calls: 5, cu: 100 },
        { day: '2026-01-06', network: 'webhooks', calls: 3, cu: 75 },
      ],
      total_cu: 375,
      total_calls: 18,
    });
    // The same answer the account's own key gets.
    const own = await api(
      billing.url,
      'GET',
      `/api/v1/account/usage?group_by=day_network&${range}`,
      created.api_key.key,
    );
    expect(own.body).toEqual(usage.body);

    const topUps = await asOperator<{ items: Array<{ id: string; source: string }> }>(
      `/api/v1/admin/accounts/${id}/top-ups`,
    );
    expect(topUps.body.items).toEqual([
      expect.objectContaining({ id: credited.body.id, source: 'operator', status: 'pending' }),
    ]);
  });

  it('answers 404 for an unknown or malformed account id', async () => {
    for (const id of ['acc_000000000000000000000000', 'not-an-id', 'key_000000000000000000000000'])
      for (const tail of ['', '/usage', '/top-ups']) {
        const answer = await asOperator<{ error: string }>(`/api/v1/admin/accounts/${id}${tail}`);
        expect([id, tail, answer.status, answer.body.error]).toEqual([id, tail, 404, 'not_found']);
      }
  });
});

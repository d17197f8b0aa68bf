import { Events } from '@meridian/contracts';
import {
  api,
  BillingHarness,
  eventually,
  nodeUsage,
  OPERATOR_TOKEN,
  type BillingApp,
} from '../testing/billing-harness';
import { createdAccountResponse, usageResponse } from '../http/response.schemas';

interface Usage {
  from: string;
  to: string;
  items: Array<{ day: string; calls: number; cu: number }>;
  total_cu: number;
}

/** The usage read counts whole hours and says which (QA: 10-minute pages counted an hour each). */
describe('billing-ledger usage bounds snap to whole hours (real Postgres + NATS)', () => {
  const h = new BillingHarness();
  let billing: BillingApp;
  let key: string;
  let accountId: string;

  beforeAll(async () => {
    await h.setup();
    billing = await h.start();
    const created = await api<{ account: { id: string }; api_key: { key: string } }>(
      billing.url,
      'POST',
      '/api/v1/admin/accounts',
      OPERATOR_TOKEN,
      { name: 'Usage pager', plan: 'starter' },
    );
    expect(createdAccountResponse.safeParse(created.body).error).toBeUndefined();
    key = created.body.api_key.key;
    const id = created.body.account.id;
    accountId = id;
    // 20 CU at 07:59, 200 CU in the 08:00 hour, 2,000 CU at 09:00 sharp.
    for (const event of [
      nodeUsage(id, 20, '2026-11-29T07:59:00.000Z'),
      nodeUsage(id, 200, '2026-11-29T08:15:00.000Z'),
      nodeUsage(id, 2_000, '2026-11-29T09:00:00.000Z'),
    ])
      await h.publisher.publishJson(Events.usageRecorded.subjectOf(event), event, event.id);
    await eventually(() => h.usageDrained(), 15_000, 'usage drained');
  });
  afterAll(() => h.teardown());

  const usage = async (from: string, to: string) => {
    const answer = await api<Usage>(
      billing.url,
      'GET',
      `/api/v1/account/usage?group_by=day&from=${from}&to=${to}`,
      key,
    );
    expect(answer.status).toBe(200);
    // The answer is what /openapi.json says it is.
    return usageResponse.parse(answer.body) as Usage;
  };

  it('answers a 10-minute window with the whole hour it counted, and says so', async () => {
    expect(await usage('2026-11-29T08:10:00Z', '2026-11-29T08:20:00Z')).toMatchObject({
      from: '2026-11-29T08:00:00.000Z',
      to: '2026-11-29T09:00:00.000Z',
      total_cu: 200,
    });
    // Every 10-minute page of that hour is the same hour: a client paging on the echoed bounds
    // moves to 09:00 and never counts it twice.
    expect(await usage('2026-11-29T08:40:00Z', '2026-11-29T08:50:00Z')).toMatchObject({
      from: '2026-11-29T08:00:00.000Z',
      to: '2026-11-29T09:00:00.000Z',
      total_cu: 200,
    });
  });

  it('from: the hour it falls in counts whole; to: an hour starting at it does not count', async () => {
    // from one minute before 08:00 counts the 07:00 hour; to exactly 09:00 leaves 09:00 out.
    expect(await usage('2026-11-29T07:59:30Z', '2026-11-29T09:00:00Z')).toMatchObject({
      from: '2026-11-29T07:00:00.000Z',
      to: '2026-11-29T09:00:00.000Z',
      total_cu: 220,
    });
    // from exactly 08:00 leaves 07:00 out; to one millisecond past 09:00 counts the 09:00 hour.
    expect(await usage('2026-11-29T08:00:00Z', '2026-11-29T09:00:00.001Z')).toMatchObject({
      from: '2026-11-29T08:00:00.000Z',
      to: '2026-11-29T10:00:00.000Z',
      total_cu: 2_200,
    });
  });

  it('names a bad query parameter as a query parameter (QA: it said "(body)")', async () => {
    const unknown = await api<{ error: string; message: string }>(
      billing.url,
      'GET',
      '/api/v1/account/usage?group_by=day&form=2026-11-29T08:00:00Z',
      key,
    );
    expect([unknown.status, unknown.body.error, unknown.body.message]).toEqual([
      400,
      'invalid_query',
      'query: unknown parameter "form"',
    ]);
    const bad = await api<{ error: string; message: string }>(
      billing.url,
      'GET',
      '/api/v1/account/usage?group_by=week',
      key,
    );
    expect([bad.status, bad.body.error]).toEqual([400, 'invalid_query']);
    expect(bad.body.message).toMatch(/^query\.group_by: /);
  });

  it('refuses bounds Postgres cannot hold with 400 invalid_query, on both routes (QA: a 500)', async () => {
    for (const [path, token] of [
      ['/api/v1/account/usage', key],
      [`/api/v1/admin/accounts/${accountId}/usage`, OPERATOR_TOKEN],
    ] as const) {
      for (const [query, where] of [
        ['to=9999-12-31T23:59:59Z', 'query.to'],
        ['from=0000-01-01T00:00:00Z&to=0000-02-01T00:00:00Z', 'query.from'],
      ]) {
        const answer = await api<{ error: string; message: string }>(
          billing.url,
          'GET',
          `${path}?${query}`,
          token,
        );
        expect([path, answer.status, answer.body.error]).toEqual([path, 400, 'invalid_query']);
        expect(answer.body.message).toContain(`${where}: a time from 1970-01-01T00:00:00Z`);
      }
      // The latest bound allowed is read as it is: Postgres takes it.
      const latest = await api<Usage>(
        billing.url,
        'GET',
        `${path}?from=9999-12-01T00:00:00Z&to=9999-12-31T23:00:00Z`,
        token,
      );
      expect([latest.status, latest.body.to, latest.body.total_cu]).toEqual([
        200,
        '9999-12-31T23:00:00.000Z',
        0,
      ]);
    }
  });

  it('whole-hour pages add up to the whole range', async () => {
    const pages = [];
    for (const [from, to] of [
      ['2026-11-29T07:00:00Z', '2026-11-29T08:00:00Z'],
      ['2026-11-29T08:00:00Z', '2026-11-29T09:00:00Z'],
      ['2026-11-29T09:00:00Z', '2026-11-29T10:00:00Z'],
    ] as const)
      pages.push((await usage(from, to)).total_cu);
    expect(pages).toEqual([20, 200, 2_000]);
    expect((await usage('2026-11-29T07:00:00Z', '2026-11-29T10:00:00Z')).total_cu).toBe(2_220);
  });
});

import {
  api,
  BillingHarness,
  bulkAccounts,
  OPERATOR_TOKEN,
  type BillingApp,
} from '../testing/billing-harness';
import { topUpResponse } from '../http/response.schemas';

interface TopUp {
  id: string;
  cu: number;
  source: string;
}

/** QA: a reused Idempotency-Key with another body answered the first top-up as if it were this one. */
describe('billing-ledger Idempotency-Key binds to its request (real Postgres + NATS)', () => {
  const h = new BillingHarness();
  let billing: BillingApp;
  let id: string;
  let key: string;

  beforeAll(async () => {
    await h.setup();
    billing = await h.start();
    ({ id, key } = (await bulkAccounts(billing.url, 1, 'Idempotent buyer'))[0]!);
  });
  afterAll(() => h.teardown());

  const topUp = (idempotencyKey: string, body: unknown) =>
    api<TopUp & { error?: string }>(billing.url, 'POST', '/api/v1/top-ups', key, body, {
      'idempotency-key': idempotencyKey,
    });
  const credit = (idempotencyKey: string, body: unknown) =>
    api<TopUp & { error?: string }>(
      billing.url,
      'POST',
      `/api/v1/admin/accounts/${id}/top-ups`,
      OPERATOR_TOKEN,
      body,
      { 'idempotency-key': idempotencyKey },
    );
  const topUpCount = async () =>
    (await api<{ items: TopUp[] }>(billing.url, 'GET', '/api/v1/top-ups?limit=200', key)).body.items
      .length;

  it('a retry of the same request answers the first top-up, however its JSON is spelled', async () => {
    const first = await topUp('order-1', { cu: 5_000 });
    expect(first.status).toBe(201);
    const retry = await topUp('order-1', '{ "cu" : 5000 }');
    expect([retry.status, retry.body.id, retry.body.cu]).toEqual([201, first.body.id, 5_000]);
    expect(await topUpCount()).toBe(1);
  });

  it('the key reused with another amount is 409 idempotency_key_reused and buys nothing', async () => {
    const first = await topUp('order-2', { cu: 1_000 });
    expect(first.status).toBe(201);
    const reused = await topUp('order-2', { cu: 2_000 });
    expect([reused.status, reused.body.error]).toEqual([409, 'idempotency_key_reused']);
    expect(reused.body).toMatchObject({ message: expect.stringContaining('different request') });
    // Still the first one for the request it was made with.
    expect((await topUp('order-2', { cu: 1_000 })).body.id).toBe(first.body.id);
    expect(await topUpCount()).toBe(2);
  });

  it('a malformed key is 400 invalid_idempotency_key on both routes (the rule webhook-matcher uses) and buys nothing; a key of any printable ASCII is taken', async () => {
    const before = await topUpCount();
    for (const bad of ['two words', 'k'.repeat(201)])
      for (const send of [topUp, credit]) {
        const refused = await send(bad, { cu: 100 });
        expect([refused.status, refused.body.error]).toEqual([400, 'invalid_idempotency_key']);
      }
    expect(await topUpCount()).toBe(before);
    expect((await topUp('order/7#a+b', { cu: 100 })).status).toBe(201);
  });

  it('the account and operator routes share the account’s keys: one route’s key is not the other’s', async () => {
    const bought = await topUp('shared-1', { cu: 300 });
    expect(bought.status).toBe(201);
    const credited = await credit('shared-1', { cu: 300 });
    expect([credited.status, credited.body.error]).toEqual([409, 'idempotency_key_reused']);
    const own = await credit('operator-1', { cu: 300 });
    expect([own.status, own.body.source]).toEqual([201, 'operator']);
    expect(topUpResponse.safeParse(own.body).error).toBeUndefined();
    expect((await credit('operator-1', { cu: 300 })).body.id).toBe(own.body.id);
    expect((await credit('operator-1', { cu: 301 })).body.error).toBe('idempotency_key_reused');
  });

  it('concurrent requests with one key: one request wins, its copies share its top-up, the others are refused', async () => {
    const answers = await Promise.all(
      [700, 800, 700, 800, 700, 800].map((cu) => topUp('race-1', { cu })),
    );
    const created = answers.filter((a) => a.status === 201);
    const refused = answers.filter((a) => a.status === 409);
    expect(created.length).toBe(3);
    expect(refused.length).toBe(3);
    expect(new Set(created.map((a) => a.body.id)).size).toBe(1);
    expect(new Set(created.map((a) => a.body.cu)).size).toBe(1);
    expect(refused.every((a) => a.body.error === 'idempotency_key_reused')).toBe(true);
  });
});

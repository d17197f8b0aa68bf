import { api, BillingHarness, OPERATOR_TOKEN, type BillingApp } from '../testing/billing-harness';
import { adminApiKeysPage } from './admin.schemas';
import { createdAccountResponse } from '../http/response.schemas';

interface Created {
  account: { id: string; name: string };
  api_key: { id: string; key: string; scopes: string[] };
  error?: string;
  message?: string;
}

/**
 * The dashboard's sign-up died after billing made the account (or lost billing's answer): its
 * retry made a second account, and the first was never used (ADR 0110 amendment).
 */
describe('billing-ledger POST /admin/accounts with an Idempotency-Key (real Postgres + NATS)', () => {
  const h = new BillingHarness();
  let billing: BillingApp;

  beforeAll(async () => {
    await h.setup();
    billing = await h.start();
  });
  afterAll(() => h.teardown());

  const create = (idempotencyKey: string | undefined, body: unknown) =>
    api<Created>(
      billing.url,
      'POST',
      '/api/v1/admin/accounts',
      OPERATOR_TOKEN,
      body,
      idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey },
    );
  const accountsNamed = async (name: string) =>
    (
      await api<{ items: Array<{ id: string; name: string }> }>(
        billing.url,
        'GET',
        `/api/v1/admin/accounts?q=${encodeURIComponent(name)}&limit=200`,
        OPERATOR_TOKEN,
      )
    ).body.items.filter((item) => item.name === name);
  const accountWith = async (key: string) =>
    (await api(billing.url, 'GET', '/api/v1/account', key)).status;
  const dashboardBody = (name: string) => ({
    name,
    type: 'individual',
    api_key_scopes: ['account', 'webhooks', 'audit'],
    api_key_managed: true,
  });

  it('a repeat answers the same account with a new key that works; the earlier answer’s key is refused', async () => {
    const first = await create('sign-up-1', dashboardBody('Repeat Ltd'));
    expect(first.status).toBe(201);
    createdAccountResponse.parse(first.body);
    // Spelled another way (spacing, key order, a default written out): the same request.
    const repeat = await create(
      'sign-up-1',
      `{ "api_key_managed": true, "api_key_scopes": ["account","webhooks","audit"],
         "type": "individual", "name": "Repeat Ltd", "node_owner": false }`,
    );
    expect(repeat.status).toBe(201);
    createdAccountResponse.parse(repeat.body);
    expect(repeat.body.account.id).toBe(first.body.account.id);
    expect(repeat.body.api_key.id).not.toBe(first.body.api_key.id);
    expect(repeat.body.api_key.scopes).toEqual(['account', 'audit', 'webhooks']);
    expect(await accountWith(repeat.body.api_key.key)).toBe(200);
    expect(await accountWith(first.body.api_key.key)).toBe(401);
    expect((await accountsNamed('Repeat Ltd')).map((a) => a.id)).toEqual([first.body.account.id]);
    // The new key is managed like the first (out of the account's reach), the old one revoked.
    const keys = await api(
      billing.url,
      'GET',
      `/api/v1/admin/accounts/${first.body.account.id}/api-keys`,
      OPERATOR_TOKEN,
    );
    const items = adminApiKeysPage.parse(keys.body).items;
    expect(
      items.map((k) => [k.id, k.managed, k.revoked_at === null]).sort((a, b) => (a < b ? -1 : 1)),
    ).toEqual(
      [
        [first.body.api_key.id, true, false],
        [repeat.body.api_key.id, true, true],
      ].sort((a, b) => (a < b ? -1 : 1)),
    );
    // A third repeat revokes the second answer's key in turn.
    const third = await create('sign-up-1', dashboardBody('Repeat Ltd'));
    expect(third.body.account.id).toBe(first.body.account.id);
    expect(await accountWith(repeat.body.api_key.key)).toBe(401);
    expect(await accountWith(third.body.api_key.key)).toBe(200);
  });

  it('the key with another request is 409 idempotency_key_reused and changes nothing', async () => {
    const first = await create('sign-up-2', dashboardBody('Bound Ltd'));
    expect(first.status).toBe(201);
    for (const other of [
      dashboardBody('Another name'),
      { ...dashboardBody('Bound Ltd'), api_key_managed: false },
      { ...dashboardBody('Bound Ltd'), plan: 'starter' },
    ]) {
      const reused = await create('sign-up-2', other);
      expect([reused.status, reused.body.error]).toEqual([409, 'idempotency_key_reused']);
      expect(reused.body.message).toContain('different request');
    }
    expect(await accountWith(first.body.api_key.key)).toBe(200);
    expect(await accountsNamed('Another name')).toEqual([]);
    expect(await accountsNamed('Bound Ltd')).toHaveLength(1);
    // A key names one request in the account's key space: not a top-up of that account too.
    const topUp = await api<{ error?: string }>(
      billing.url,
      'POST',
      `/api/v1/admin/accounts/${first.body.account.id}/top-ups`,
      OPERATOR_TOKEN,
      { cu: 100 },
      { 'idempotency-key': 'sign-up-2' },
    );
    expect([topUp.status, topUp.body.error]).toEqual([409, 'idempotency_key_reused']);
  });

  it('concurrent repeats make one account; only one answer’s key stays active', async () => {
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => create('sign-up-3', dashboardBody('Racing Ltd'))),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(6).fill(201));
    const accounts = await accountsNamed('Racing Ltd');
    expect(accounts).toHaveLength(1);
    expect(new Set(answers.map((a) => a.body.account.id))).toEqual(new Set([accounts[0]!.id]));
    const working = await Promise.all(answers.map((a) => accountWith(a.body.api_key.key)));
    expect(working.filter((s) => s === 200)).toHaveLength(1);
    expect(working.filter((s) => s === 401)).toHaveLength(5);
  });

  it('without a key every request makes an account, as before; a malformed key is 400 and makes none', async () => {
    expect((await create(undefined, dashboardBody('Keyless Ltd'))).status).toBe(201);
    expect((await create(undefined, dashboardBody('Keyless Ltd'))).status).toBe(201);
    expect(await accountsNamed('Keyless Ltd')).toHaveLength(2);
    const bad = await create('two words', dashboardBody('Malformed Ltd'));
    expect([bad.status, bad.body.error]).toEqual([400, 'invalid_idempotency_key']);
    expect(await accountsNamed('Malformed Ltd')).toEqual([]);
  });
});

import { api, BillingHarness, bulkAccounts, type BillingApp } from '../testing/billing-harness';

interface Answer {
  id?: string;
  token?: string;
  key?: string;
  error?: string;
  message?: string;
  // already_created: what the key's first use made (the error body carries its details).
  active?: boolean;
  credential?: Record<string, unknown>;
}

/**
 * QA: the same Idempotency-Key on POST /access-tokens and POST /api-keys answered 201 twice with
 * two credentials (a retry after a timeout got a second one; a second token took a plan slot).
 * A repeat now makes none and answers 409 already_created naming the first (ADR 0110 amendment
 * "Credential creates take an Idempotency-Key"); the secret is not stored, so never answered again.
 */
describe('billing-ledger credential creates with an Idempotency-Key (real Postgres + NATS)', () => {
  const h = new BillingHarness();
  let billing: BillingApp;

  beforeAll(async () => {
    await h.setup();
    billing = await h.start();
  });
  afterAll(() => h.teardown());

  const post = (path: string, key: string, idempotencyKey: string | undefined, body: unknown) =>
    api<Answer>(
      billing.url,
      'POST',
      path,
      key,
      body,
      idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey },
    );
  const createToken = (key: string, idempotencyKey: string | undefined, body: unknown) =>
    post('/api/v1/access-tokens', key, idempotencyKey, body);
  const createKey = (key: string, idempotencyKey: string | undefined, body: unknown) =>
    post('/api/v1/api-keys', key, idempotencyKey, body);
  const ids = async (key: string, path: string) =>
    (
      await api<{ items: Array<{ id: string }> }>(billing.url, 'GET', `${path}?limit=200`, key)
    ).body.items.map((item) => item.id);
  const account = async (plan: string) => (await bulkAccounts(billing.url, 1, 'idem', plan))[0]!;

  describe('POST /access-tokens', () => {
    it('a repeat makes no second token: 409 already_created with the first one’s id, no secret; the plan counts one token', async () => {
      const { key } = await account('free'); // 2 tokens
      const first = await createToken(key, 'tok-1', { network: 'eth-mainnet' });
      expect(first.status).toBe(201);
      expect(first.body.token).toMatch(/^[0-9a-f]{40}$/);
      // The default name written out and other JSON spacing are the same request.
      for (const body of [
        { network: 'eth-mainnet' },
        '{ "name": "eth-mainnet",  "network" : "eth-mainnet" }',
      ]) {
        const repeat = await createToken(key, 'tok-1', body);
        expect([repeat.status, repeat.body.error]).toEqual([409, 'already_created']);
        expect(repeat.body).toMatchObject({
          id: first.body.id,
          active: true,
          credential: {
            id: first.body.id,
            network: 'eth-mainnet',
            name: 'eth-mainnet',
            hint: expect.any(String),
            created_at: expect.any(String),
          },
        });
        expect(repeat.body.credential).not.toHaveProperty('token');
        expect(repeat.body.message).toContain(`/access-tokens/${first.body.id}/roll`);
        expect(JSON.stringify(repeat.body)).not.toContain(first.body.token);
      }
      expect(await ids(key, '/api/v1/access-tokens')).toEqual([first.body.id]);
      // Free holds two: the repeats took no slot, so one more fits, then the cap; the key's
      // repeat still names its token rather than the cap.
      expect((await createToken(key, undefined, { network: 'eth-mainnet' })).status).toBe(201);
      const third = await createToken(key, undefined, { network: 'eth-mainnet' });
      expect([third.status, third.body.error]).toEqual([409, 'cap_access_tokens_exceeded']);
      const late = await createToken(key, 'tok-1', { network: 'eth-mainnet' });
      expect([late.status, late.body.id]).toEqual([409, first.body.id]);
    });

    it('the key with another body is 409 idempotency_key_reused and makes nothing; it is not an API key’s key either', async () => {
      const { key } = await account('starter');
      const first = await createToken(key, 'tok-2', { network: 'eth-mainnet' });
      expect(first.status).toBe(201);
      for (const body of [
        { network: 'polygon-mainnet' },
        { network: 'eth-mainnet', name: 'other' },
      ]) {
        const reused = await createToken(key, 'tok-2', body);
        expect([reused.status, reused.body.error]).toEqual([409, 'idempotency_key_reused']);
      }
      const asKey = await createKey(key, 'tok-2', { scopes: ['account'] });
      expect([asKey.status, asKey.body.error]).toEqual([409, 'idempotency_key_reused']);
      expect(await ids(key, '/api/v1/access-tokens')).toEqual([first.body.id]);
    });

    it('concurrent requests with one key make one token; every other answer names it', async () => {
      const { key } = await account('starter');
      const answers = await Promise.all(
        Array.from({ length: 8 }, () => createToken(key, 'tok-race', { network: 'eth-mainnet' })),
      );
      const made = answers.filter((a) => a.status === 201);
      expect(made.length).toBe(1);
      const others = answers.filter((a) => a.status !== 201);
      expect(others.map((a) => [a.status, a.body.error, a.body.id])).toEqual(
        others.map(() => [409, 'already_created', made[0]!.body.id]),
      );
      expect(await ids(key, '/api/v1/access-tokens')).toEqual([made[0]!.body.id]);
    });

    it('a repeat after the token was deleted still makes none and says it is gone', async () => {
      const { key } = await account('starter');
      const first = await createToken(key, 'tok-3', { network: 'eth-mainnet' });
      const deleted = await api(
        billing.url,
        'DELETE',
        `/api/v1/access-tokens/${first.body.id}`,
        key,
      );
      expect(deleted.status).toBe(204);
      const repeat = await createToken(key, 'tok-3', { network: 'eth-mainnet' });
      expect([repeat.status, repeat.body.error, repeat.body.id]).toEqual([
        409,
        'already_created',
        first.body.id,
      ]);
      expect(repeat.body.active).toBe(false);
      expect(await ids(key, '/api/v1/access-tokens')).toEqual([]);
    });
  });

  describe('POST /api-keys', () => {
    it('a repeat makes no second key: 409 already_created with the first one’s id, no secret', async () => {
      const { key } = await account('starter');
      const before = await ids(key, '/api/v1/api-keys');
      const first = await createKey(key, 'key-1', { name: 'ci', scopes: ['webhooks', 'account'] });
      expect(first.status).toBe(201);
      expect(first.body.key).toMatch(/^mrd_/);
      // Scopes are a set: another order is the same request.
      const repeat = await createKey(key, 'key-1', { scopes: ['account', 'webhooks'], name: 'ci' });
      expect([repeat.status, repeat.body.error]).toEqual([409, 'already_created']);
      expect(repeat.body).toMatchObject({
        id: first.body.id,
        active: true,
        credential: {
          id: first.body.id,
          name: 'ci',
          scopes: ['account', 'webhooks'],
          hint: expect.any(String),
          created_at: expect.any(String),
          created_by: null,
        },
      });
      expect(repeat.body.credential).not.toHaveProperty('key');
      expect(JSON.stringify(repeat.body)).not.toContain(first.body.key);
      expect(await ids(key, '/api/v1/api-keys')).toEqual([first.body.id, ...before]);
      // The first answer's key is the one that works.
      expect((await api(billing.url, 'GET', '/api/v1/account', first.body.key)).status).toBe(200);
    });

    it('the key with another body is 409 idempotency_key_reused and makes nothing', async () => {
      const { key } = await account('starter');
      const first = await createKey(key, 'key-2', { name: 'ci', scopes: ['account'] });
      expect(first.status).toBe(201);
      const listed = await ids(key, '/api/v1/api-keys');
      for (const body of [
        { name: 'ci', scopes: ['account', 'audit'] },
        { name: 'cd', scopes: ['account'] },
      ]) {
        const reused = await createKey(key, 'key-2', body);
        expect([reused.status, reused.body.error]).toEqual([409, 'idempotency_key_reused']);
      }
      const asToken = await createToken(key, 'key-2', { network: 'eth-mainnet' });
      expect([asToken.status, asToken.body.error]).toEqual([409, 'idempotency_key_reused']);
      expect(await ids(key, '/api/v1/api-keys')).toEqual(listed);
      expect(await ids(key, '/api/v1/access-tokens')).toEqual([]);
    });

    it('concurrent requests with one key make one key; every other answer names it', async () => {
      const { key } = await account('starter');
      const before = await ids(key, '/api/v1/api-keys');
      const answers = await Promise.all(
        Array.from({ length: 8 }, () => createKey(key, 'key-race', { scopes: ['audit'] })),
      );
      const made = answers.filter((a) => a.status === 201);
      expect(made.length).toBe(1);
      const others = answers.filter((a) => a.status !== 201);
      expect(others.map((a) => [a.status, a.body.error, a.body.id])).toEqual(
        others.map(() => [409, 'already_created', made[0]!.body.id]),
      );
      expect(await ids(key, '/api/v1/api-keys')).toEqual([made[0]!.body.id, ...before]);
    });
  });

  it('a malformed key is 400 invalid_idempotency_key on both creates and makes nothing; without a key every request makes one, as before', async () => {
    const { key } = await account('starter');
    const keys = await ids(key, '/api/v1/api-keys');
    for (const bad of ['two words', 'k'.repeat(201)]) {
      const token = await createToken(key, bad, { network: 'eth-mainnet' });
      expect([token.status, token.body.error]).toEqual([400, 'invalid_idempotency_key']);
      const made = await createKey(key, bad, { scopes: ['account'] });
      expect([made.status, made.body.error]).toEqual([400, 'invalid_idempotency_key']);
    }
    expect(await ids(key, '/api/v1/access-tokens')).toEqual([]);
    expect(await ids(key, '/api/v1/api-keys')).toEqual(keys);
    for (let i = 0; i < 2; i++) {
      expect((await createToken(key, undefined, { network: 'eth-mainnet' })).status).toBe(201);
      expect((await createKey(key, undefined, { scopes: ['account'] })).status).toBe(201);
    }
    expect((await ids(key, '/api/v1/access-tokens')).length).toBe(2);
    expect((await ids(key, '/api/v1/api-keys')).length).toBe(keys.length + 2);
  });
});

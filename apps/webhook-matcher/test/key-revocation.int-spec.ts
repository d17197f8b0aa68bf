import { eventually, startMatcherStack, type MatcherTestStack } from './support/matcher-app';

/**
 * Issue 11, "revoked means revoked": a key deleted at billing-ledger stops working at once
 * although webhook-matcher caches keys for 30 s (the cache watches billing's revocation feed).
 */
describe('webhook-matcher: a deleted API key (real billing-ledger, shared NATS)', () => {
  let stack: MatcherTestStack;

  beforeAll(async () => {
    stack = await startMatcherStack({ WEBHOOK_KEY_CACHE_TTL_MS: '30000' });
  }, 120_000);

  afterAll(async () => {
    await stack?.close();
  });

  async function billingCall<T>(method: string, path: string, key: string, body?: unknown) {
    const response = await fetch(stack.billing.baseUrl + path, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`billing ${method} ${path}: ${response.status}`);
    return (response.status === 204 ? undefined : await response.json()) as T;
  }

  it('answers 401 after the delete, while the 30 s cache still held the key', async () => {
    const account = await stack.billing.createAccount({ plan: 'starter' });
    const { id, key } = await billingCall<{ id: string; key: string }>(
      'POST',
      '/api/v1/api-keys',
      account.key,
      { name: 'to-delete', scopes: ['webhooks'] },
    );
    expect((await stack.call('GET', '/webhooks/limits', key)).status).toBe(200); // now cached
    await billingCall('DELETE', `/api/v1/api-keys/${id}`, account.key);
    // No window in ms (a flake on a loaded CI): the cache's 30 s run on the stack's fake clock,
    // which nothing here moves, so the key is still cached for as long as this test waits; only
    // its eviction by billing's revocation feed can answer 401.
    let answer = { status: 200, body: {} as Record<string, unknown> };
    await eventually(async () => {
      answer = await stack.call('GET', '/webhooks/limits', key);
      return answer.status !== 200;
    }, 20_000).catch(() => undefined);
    expect(answer.status).toBe(401);
    expect(answer.body).toMatchObject({ error: 'unauthorized' });
    // Another key of the account was not evicted with it.
    expect((await stack.call('GET', '/webhooks/limits', account.key)).status).toBe(200);
  });
});

import { startCuttableTcpRelay, type CuttableTcpRelay } from '@meridian/testing';
import { api, BillingHarness, OPERATOR_TOKEN, type BillingApp } from '../testing/billing-harness';

/**
 * Postgres out of reach while the app runs (QA, failure testing: 500 `internal` before): the
 * account API answers 503 `database_unavailable` with Retry-After (libs/platform/http's filter,
 * isDatabaseUnreachable of libs/platform/db), and answers normally once Postgres is back. The
 * app's Postgres is the test server behind a relay, cut mid-test.
 */
describe('billing-ledger with its Postgres out of reach (real Postgres behind a relay)', () => {
  const h = new BillingHarness();
  let relay: CuttableTcpRelay;
  let billing: BillingApp;

  beforeAll(async () => {
    await h.setup();
    const url = new URL(h.db.url);
    relay = await startCuttableTcpRelay(Number(url.port || 5432));
    url.host = `127.0.0.1:${relay.port}`;
    billing = await h.start({ DATABASE_URL: url.toString() });
  });
  afterAll(async () => {
    await relay?.close();
    await h.teardown();
  });

  const get = async (path: string, key: string) => {
    const response = await fetch(`${billing.url}${path}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    return {
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      body: (await response.json()) as Record<string, unknown>,
    };
  };

  it('answers 503 database_unavailable with Retry-After while cut, and normally once back', async () => {
    const created = await api<{ api_key: { key: string } }>(
      billing.url,
      'POST',
      '/api/v1/admin/accounts',
      OPERATOR_TOKEN,
      { name: 'database-outage', plan: 'starter' },
    );
    expect(created.status).toBe(201);
    const key = created.body.api_key.key;
    const routes = ['/api/v1/account/balance', '/api/v1/account/usage'];
    for (const path of routes) expect((await get(path, key)).status).toBe(200);

    await relay.cut();
    for (const path of routes) {
      // Twice: the pool's lost connections first, then a refused new one.
      for (let i = 0; i < 2; i += 1)
        expect(await get(path, key)).toEqual({
          status: 503,
          retryAfter: '2',
          body: {
            error: 'database_unavailable',
            message: 'the database cannot be reached right now; retry later',
            request_id: expect.any(String),
          },
        });
    }

    await relay.restore();
    for (const path of routes) expect((await get(path, key)).status).toBe(200);
  });
});

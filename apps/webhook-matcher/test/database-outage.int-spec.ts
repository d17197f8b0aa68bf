import { createAppDataSource, runMigrations } from '@meridian/platform-db';
import {
  createTestDatabase,
  startCuttableTcpRelay,
  type CuttableTcpRelay,
  type TestDatabase,
} from '@meridian/testing';
import { dataSourceOptions, SCHEMA } from '../src/db/data-source';
import { startMatcherStack, TARGET, type MatcherTestStack } from './support/matcher-app';

jest.setTimeout(120_000);

/**
 * webhook-matcher with its Postgres out of reach (QA, failure testing: GET /webhooks and POST
 * /webhooks/{id}/pause answered 500 `internal`): 503 `database_unavailable` with Retry-After
 * (libs/platform/http's filter) while billing-ledger still checks the key, and the usual answers
 * once Postgres is back. The matcher's Postgres is the test server behind a relay, cut mid-test.
 */
describe('webhook-matcher with its Postgres out of reach (real Postgres behind a relay)', () => {
  let db: TestDatabase;
  let relay: CuttableTcpRelay;
  let s: MatcherTestStack;

  beforeAll(async () => {
    db = await createTestDatabase({ prefix: 'wh_matcher_outage' });
    await runMigrations(createAppDataSource(dataSourceOptions(db.url)), SCHEMA);
    const url = new URL(db.url);
    relay = await startCuttableTcpRelay(Number(url.port || 5432));
    url.host = `127.0.0.1:${relay.port}`;
    s = await startMatcherStack({ DATABASE_URL: url.toString(), NETWORKS: 'eth-mainnet' });
  });
  afterAll(async () => {
    await s?.close();
    await relay?.close();
    await db?.drop();
  });

  const send = async (method: 'GET' | 'POST', path: string, key: string) => {
    const response = await s.app.inject({
      method,
      url: `/api/v1${path}`,
      headers: { authorization: `Bearer ${key}` },
    });
    return {
      status: response.statusCode,
      retryAfter: response.headers['retry-after'],
      error: (response.json() as { error?: string }).error,
    };
  };

  it('answers 503 database_unavailable with Retry-After while cut, and as before once back', async () => {
    const { key } = await s.billing.createAccount({ plan: 'starter' });
    const created = await s.call('POST', '/webhooks', key, {
      network: 'eth-mainnet',
      trigger_type: 'address_activity',
      target_url: TARGET,
      addresses: ['0x70997970c51812dc3a010c7d01b50e0d17dc79c8'],
    });
    expect(created.status).toBe(201);
    const id = created.body['id'] as string;
    expect((await send('GET', '/webhooks', key)).status).toBe(200);

    await relay.cut();
    for (const [method, path] of [
      ['GET', '/webhooks'],
      ['POST', `/webhooks/${id}/pause`],
      ['GET', '/webhooks'],
    ] as const)
      expect(await send(method, path, key)).toEqual({
        status: 503,
        retryAfter: '2',
        error: 'database_unavailable',
      });

    await relay.restore();
    expect((await send('GET', '/webhooks', key)).status).toBe(200);
    expect((await send('POST', `/webhooks/${id}/pause`, key)).status).toBe(200);
  });
});

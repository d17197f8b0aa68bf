import { provisionMessaging } from '@meridian/platform-messaging';
import { deleteNatsNamespace, FakeClock, testNatsUrl, uniqueNatsPrefix } from '@meridian/testing';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { startAuditApp, type AuditTestApp } from './support/audit-app';
import { startBillingLedger, type RunningBillingLedger } from './support/billing-ledger.process';

/**
 * Issue 11, "revoked means revoked": a key deleted at billing-ledger stops working at once
 * although audit-api caches keys for 30 s (the cache watches billing's revocation feed).
 */
describe('audit-api: a deleted API key (real billing-ledger, shared NATS)', () => {
  const natsUrl = testNatsUrl();
  const natsPrefix = uniqueNatsPrefix();
  let billing: RunningBillingLedger;
  let audit: AuditTestApp;

  beforeAll(async () => {
    const nc = await connect({ servers: natsUrl });
    await provisionMessaging(await jetstreamManager(nc), natsPrefix);
    await nc.close();
    billing = await startBillingLedger(natsPrefix);
    audit = await startAuditApp(
      {
        BILLING_GRPC_URL: billing.grpcTarget,
        NATS_URL: natsUrl,
        NATS_PREFIX: natsPrefix,
        AUDIT_KEY_CACHE_TTL_MS: '30000',
        AUDIT_RPC_URLS: JSON.stringify({ ETH: 'http://127.0.0.1:1' }),
      },
      // Real time: the point is what happens within a second of real time.
      { clock: new FakeClock(new Date()) },
    );
  }, 90_000);

  afterAll(async () => {
    await audit?.close();
    await billing?.stop();
    await deleteNatsNamespace(natsUrl, natsPrefix);
  });

  const quota = (key: string) =>
    audit.app.inject({
      method: 'GET',
      url: '/v1/quota',
      headers: { authorization: `Bearer ${key}` },
    });

  it('answers 401 within 1 s of the delete, while the 30 s cache still held the key', async () => {
    const account = await billing.createAccount('starter');
    const { id, key } = await billing.createKeyWithId(account.key, ['audit']);
    expect((await quota(key)).statusCode).toBe(200); // resolved and cached
    const deletedAt = Date.now();
    await billing.deleteKey(account.key, id);
    let status = 200;
    while (Date.now() - deletedAt < 1_000) {
      status = (await quota(key)).statusCode;
      if (status === 401) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(status).toBe(401);
    expect((await quota(key)).json()).toMatchObject({ error: 'invalid_api_key' });
    // Another key of the account was not evicted with it.
    expect((await quota(account.key)).statusCode).toBe(200);
  });
});

import { JetStreamConsumers, NatsProbe, provisionMessaging } from '@meridian/platform-messaging';
import {
  deleteNatsNamespace,
  FakeClock,
  sampleOf,
  startAnvil,
  startCuttableTcpRelay,
  testNatsUrl,
  uniqueNatsPrefix,
  type AnvilInstance,
  type CuttableTcpRelay,
} from '@meridian/testing';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { startAuditApp, type AuditTestApp } from './support/audit-app';
import { startBillingLedger, type RunningBillingLedger } from './support/billing-ledger.process';

// An OFAC SDN address (LAZARUS GROUP) in the ultrasoundmoney pack, as published (EIP-55).
const SANCTIONED = '0x098B716B8Aaf21512996dC57EB0615e2383E2f96';

/**
 * NATS is not part of audit-api's readiness (ADR 0212 amendment): it serves audits from its own
 * Postgres, billing's gRPC and the chain. With its NATS gone (a relay to the test server, cut)
 * it stays ready and answers, `nats_connected` says NATS is gone, and a key deleted at billing
 * meanwhile is evicted once the revocation feed is back (nothing of it lost). audit-api
 * publishes no usage: its checks are counted in its own Postgres (`audit.quota_usage`).
 */
describe('audit-api without NATS (real NATS behind a relay, real billing-ledger, anvil)', () => {
  const natsPrefix = uniqueNatsPrefix();
  let relay: CuttableTcpRelay;
  let billing: RunningBillingLedger;
  let anvil: AnvilInstance;
  let audit: AuditTestApp;

  beforeAll(async () => {
    const nc = await connect({ servers: testNatsUrl() });
    await provisionMessaging(await jetstreamManager(nc), natsPrefix);
    await nc.close();
    relay = await startCuttableTcpRelay(Number(new URL(testNatsUrl()).port || 4222));
    [billing, anvil] = await Promise.all([
      startBillingLedger(natsPrefix),
      startAnvil({ chainId: 1 }),
    ]);
    audit = await startAuditApp(
      {
        BILLING_GRPC_URL: billing.grpcTarget,
        NATS_URL: `nats://127.0.0.1:${relay.port}`,
        NATS_PREFIX: natsPrefix,
        AUDIT_KEY_CACHE_TTL_MS: '600000',
        AUDIT_RPC_URLS: JSON.stringify({ ETH: anvil.url }),
      },
      { clock: new FakeClock(new Date()) },
    );
  }, 90_000);

  afterAll(async () => {
    await audit?.close();
    await relay?.close();
    await Promise.all([billing?.stop(), anvil?.stop()]);
    await deleteNatsNamespace(testNatsUrl(), natsPrefix);
  });

  async function natsConnected(): Promise<number | undefined> {
    await audit.app.get(NatsProbe).probe();
    const text = (await audit.app.inject({ method: 'GET', url: '/metrics' })).body;
    return sampleOf(text, 'nats_connected', { service: 'audit-api' });
  }
  async function until(what: string, done: () => Promise<boolean>, timeoutMs = 30_000) {
    const deadline = Date.now() + timeoutMs;
    while (!(await done())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  const check = (key: string) =>
    audit.post('/v1/wallet-audit/check', { network: 'ETH', address: SANCTIONED }, key);

  it('stays ready and audits while NATS is gone; a revocation made meanwhile arrives after', async () => {
    const account = await billing.createAccount('premium');
    const { id, key } = await billing.createKeyWithId(account.key, ['audit']);
    await until(
      'connected, revocation feed loaded',
      async () => (await natsConnected()) === 1 && audit.app.get(JetStreamConsumers).attached(),
    );
    expect((await check(key)).status).toBe(200); // resolved at billing, cached for 10 minutes

    await relay.cut();
    await until('nats_connected 0', async () => (await natsConnected()) === 0);

    const ready = await audit.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.body).not.toMatch(/nats|consumer:|kv:/);
    const audited = await check(account.key); // a key not cached yet: billing's gRPC answers
    expect(audited.status).toBe(200);
    expect(audited.body).toMatchObject({ data: { walletAddress: SANCTIONED, status: 'Fraud' } });

    // Deleted at billing while audit-api cannot hear it: the cached key still works meanwhile.
    await billing.deleteKey(account.key, id);
    expect((await check(key)).status).toBe(200);

    await relay.restore();
    await until('nats_connected 1 again', async () => (await natsConnected()) === 1);
    await until('the revocation made during the outage evicted the key', async () => {
      return (await check(key)).status === 401;
    });
  });
});

import {
  billingV1,
  Events,
  KvBuckets,
  revokedCredentialKey,
  type CredentialRevoked,
} from '@meridian/contracts';
import { createGrpcClient, type GrpcClient } from '@meridian/platform-grpc';
import { NatsProbe } from '@meridian/platform-messaging';
import {
  sampleOf,
  startCuttableTcpRelay,
  testNatsUrl,
  type CuttableTcpRelay,
} from '@meridian/testing';
import { Registry } from 'prom-client';
import { hashSecret } from '../credentials/secrets';
import { BillingGrpcServer } from '../grpc/billing.grpc';
import {
  api,
  BillingHarness,
  eventually,
  nodeUsage,
  OPERATOR_TOKEN,
  TEST_USAGE_CONSUMERS,
  type BillingApp,
} from '../testing/billing-harness';

type Billing = GrpcClient<(typeof billingV1.BillingService)['method']>;

/**
 * NATS is not part of billing-ledger's readiness (ADR 0212 amendment): with its NATS gone (a
 * relay to the test server, cut) every replica stays in the Service, answering the account API
 * and the credentials gRPC every gateway resolves tokens through; `nats_connected` says NATS is
 * gone; once it is back the usage published meanwhile is applied once and the revocations made
 * meanwhile reach KV.
 */
describe('billing-ledger without NATS (real Postgres + NATS behind a relay)', () => {
  const h = new BillingHarness();
  let relay: CuttableTcpRelay;
  let billing: BillingApp;
  let grpc: Billing;

  beforeAll(async () => {
    await h.setup();
    relay = await startCuttableTcpRelay(Number(new URL(testNatsUrl()).port || 4222));
    billing = await h.start({ NATS_URL: `nats://127.0.0.1:${relay.port}` });
    grpc = createGrpcClient(
      billingV1.BillingService,
      `127.0.0.1:${billing.app.get(BillingGrpcServer).port}`,
      { defaultTimeoutMs: 5_000 },
    );
  });
  afterAll(async () => {
    grpc?.close();
    await relay?.close();
    await h.teardown();
  });

  async function metric(name: string, labels: Record<string, string> = {}) {
    const text = await billing.app.get(Registry).metrics();
    return sampleOf(text, name, { service: 'billing-ledger', ...labels });
  }
  async function natsConnected(): Promise<number | undefined> {
    await billing.app.get(NatsProbe).probe();
    return metric('nats_connected');
  }
  async function readyz(): Promise<{ status: number; body: unknown }> {
    const response = await fetch(`${billing.url}/readyz`);
    return { status: response.status, body: await response.json() };
  }
  const usedCu = async (accountId: string): Promise<number> => {
    const [row] = await h.dataSource.query(
      `SELECT coalesce(sum(amount_cu), 0) AS cu FROM billing.entries WHERE account_id = $1 AND ledger = 'usage'`,
      [accountId],
    );
    return Number(row.cu);
  };

  it('stays ready and serves REST and gRPC while NATS is gone; catches up once it is back', async () => {
    const created = await api<{ account: { id: string }; api_key: { key: string } }>(
      billing.url,
      'POST',
      '/api/v1/admin/accounts',
      OPERATOR_TOKEN,
      { name: 'nats-outage', plan: 'starter' },
    );
    expect(created.status).toBe(201);
    const accountId = created.body.account.id;
    const key = created.body.api_key.key;
    const durables = TEST_USAGE_CONSUMERS.map((c) => c.durable);
    await eventually(
      async () =>
        (await natsConnected()) === 1 &&
        (
          await Promise.all(
            durables.map((c) => metric('messaging_consumer_attached', { consumer: c })),
          )
        ).every((v) => v === 1),
      20_000,
      'connected, every usage durable attached',
    );
    await h.publisher.publish(Events.usageRecorded, nodeUsage(accountId, 200));
    await eventually(async () => (await usedCu(accountId)) === 200, 15_000, 'usage applied');

    await relay.cut();
    await eventually(async () => (await natsConnected()) === 0, 10_000, 'nats_connected 0');

    // Still in the Service: /readyz names no NATS check and answers 200.
    const ready = await readyz();
    expect(ready.status).toBe(200);
    expect(JSON.stringify(ready.body)).not.toMatch(/nats|consumer:|kv:/);

    // The account API and the credentials gRPC answer from Postgres.
    const balance = await api(billing.url, 'GET', '/api/v1/account/balance', key);
    expect(balance.status).toBe(200);
    const token = await api<{ id: string; token: string }>(
      billing.url,
      'POST',
      '/api/v1/access-tokens',
      key,
      { network: 'eth-mainnet' },
    );
    expect(token.status).toBe(201);
    expect(await grpc.resolveAccessToken({ token: token.body.token })).toMatchObject({
      found: true,
      accountId,
      networkKey: 'eth-mainnet',
    });
    const rolled = await api(
      billing.url,
      'POST',
      `/api/v1/access-tokens/${token.body.id}/roll`,
      key,
    );
    expect(rolled.status).toBe(200);
    expect((await grpc.resolveAccessToken({ token: token.body.token })).found).toBe(false);

    // Usage the gateways publish meanwhile waits in the stream (the test's publisher reaches
    // NATS directly; the ledger does not).
    const waiting = [nodeUsage(accountId, 40), nodeUsage(accountId, 60), nodeUsage(accountId, 80)];
    for (const event of waiting) await h.publisher.publish(Events.usageRecorded, event);
    expect(await usedCu(accountId)).toBe(200);
    expect((await readyz()).status).toBe(200);

    await relay.restore();
    await eventually(async () => (await natsConnected()) === 1, 30_000, 'nats_connected 1 again');
    await eventually(
      async () => (await h.usageDrained()) && (await usedCu(accountId)) === 380,
      30_000,
      'usage published during the outage applied',
    );
    // Applied once: a redelivery after the reconnect changes nothing.
    expect(await usedCu(accountId)).toBe(380);
    const revoked = await eventually(
      () =>
        h.kvJson<CredentialRevoked>(
          KvBuckets.revokedCredentials.name,
          revokedCredentialKey('access_token', hashSecret(token.body.token)),
        ),
      30_000,
      'the revocation made during the outage reached KV',
    );
    expect(revoked).toMatchObject({ credentialType: 'access_token', accountId });
  });
});

import { deliveryRouteOf, type DeliveryJob } from '@meridian/contracts';
import { JetStreamPublisher, NatsClient, NatsNamespace } from '@meridian/platform-messaging';
import { startAnvil, testNatsUrl, type AnvilInstance } from '@meridian/testing';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { DeliveryRoutes } from '../src/delivery-jobs/delivery-routes';
import { ChainFeed, sendMined } from './matcher-harness';
import { eventually, startMatcherStack, type MatcherTestStack } from './support/matcher-app';

jest.setTimeout(180_000);

const DEPLOYER = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const WATCHED = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';

/** A target host whose route among 2 workers is `route`. */
function hostOnRoute(route: number): string {
  for (let i = 0; ; i++) {
    const host = `hooks-${i}.example.com`;
    if (deliveryRouteOf(`https://${host}/`, 2) === route) return host;
  }
}

/**
 * webhook-matcher with DELIVERY_PARTITIONS=2 (ADR 0432): every job, from a test delivery or from
 * a matched block, is published on the route of its target's host, the subject worker i of 2
 * reads. A test delivery takes the target from the row; the matching path, which knows only the
 * webhook id, asks `DeliveryRoutes.of(id)`, answered from the webhook-status KV mirror. Real
 * billing-ledger, NATS, Postgres and anvil.
 */
describe('delivery routes: jobs go on the route of their target host', () => {
  let s: MatcherTestStack;
  let anvil: AnvilInstance;
  let nc: NatsConnection;
  let client: NatsClient;
  const seen: { subject: string; job: DeliveryJob }[] = [];

  beforeAll(async () => {
    // Mining every second, as the local stack's devnets do: a transaction is in no block yet
    // when eth_sendTransaction answers (so a test that published the head block right after
    // fails every time, not only when anvil's auto-miner is slow on a loaded host).
    anvil = await startAnvil({ chainId: 1, blockTime: 1 });
    s = await startMatcherStack({ DELIVERY_PARTITIONS: '2' });
    nc = await connect({ servers: testNatsUrl() });
    const prefix = new NatsNamespace(s.natsPrefix).subject('webhook.delivery.requested.v1');
    nc.subscribe(`${prefix}.>`, {
      callback: (_error, msg) => {
        seen.push({ subject: msg.subject.slice(prefix.length + 1), job: msg.json() });
      },
    });
    client = new NatsClient({ url: testNatsUrl(), name: 'delivery-routes-test' });
    await client.connection();
  });

  afterAll(async () => {
    await nc?.close();
    await client?.close();
    await s?.close();
    await anvil?.stop();
  });

  it('a test delivery and a matched transfer of each webhook are published on its route', async () => {
    const { key } = await s.billing.createAccount({ plan: 'starter' });
    const webhooks: { id: string; route: number }[] = [];
    for (const route of [0, 1]) {
      const created = await s.call('POST', '/webhooks', key, {
        network: 'eth-mainnet',
        trigger_type: 'address_activity',
        target_url: `https://${hostOnRoute(route)}/in`,
        addresses: [WATCHED],
      });
      expect(created.status).toBe(201);
      webhooks.push({ id: created.body.id as string, route });
    }
    for (const { id } of webhooks)
      expect((await s.call('POST', `/webhooks/${id}/test`, key)).status).toBeLessThan(300);
    await eventually(async () => seen.length >= 2);
    for (const { id, route } of webhooks) {
      const jobs = seen.filter((m) => m.job.webhookId === id);
      expect(jobs).toHaveLength(1);
      expect(jobs[0]!.job).toMatchObject({ test: true, route });
      expect(jobs[0]!.subject).toBe(`r${route}`);
    }
    // The matching path knows only the webhook id: it reads the target from the status KV.
    const routes = s.app.get(DeliveryRoutes);
    await eventually(async () => webhooks.every((w) => routes.of(w.id) === w.route));
    expect(routes.of('wh_unknown')).toBe(0);

    // The block that holds the transfer (the receipt's), not the head read after sending it.
    const receipt = await sendMined(anvil.url, { from: DEPLOYER, to: WATCHED, value: '0x1' });
    const feed = new ChainFeed(
      anvil.url,
      'eth-mainnet',
      new JetStreamPublisher(client, new NatsNamespace(s.natsPrefix)),
    );
    const number = Number.parseInt(receipt.blockNumber, 16);
    await feed.publishRange(number, number);

    // One test delivery and one matched transfer per webhook.
    const matched = () => seen.filter((m) => !m.job.test).length;
    await eventually(async () => matched() >= 2, 60_000).catch((error: Error) => {
      throw new Error(`${error.message}: jobs seen ${JSON.stringify(seen.map((m) => m.subject))}`);
    });
    for (const { id, route } of webhooks) {
      const jobs = seen.filter((m) => m.job.webhookId === id);
      expect(jobs.map((m) => `${m.job.test ? 'test' : 'matched'} ${m.job.phase}`).sort()).toEqual([
        'matched unconfirmed',
        'test unconfirmed',
      ]);
      for (const m of jobs) {
        expect(m.job.route).toBe(route);
        expect(m.subject).toBe(`r${route}`);
      }
    }
  });
});

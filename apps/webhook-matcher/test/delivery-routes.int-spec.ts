import { deliveryRouteOf, type DeliveryJob } from '@meridian/contracts';
import { NatsNamespace } from '@meridian/platform-messaging';
import { testNatsUrl } from '@meridian/testing';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { DeliveryRoutes } from '../src/delivery-jobs/delivery-routes';
import { eventually, startMatcherStack, type MatcherTestStack } from './support/matcher-app';

jest.setTimeout(180_000);

const WATCHED = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';

/** A target host whose route among 2 workers is `route`. */
function hostOnRoute(route: number): string {
  for (let i = 0; ; i++) {
    const host = `hooks-${i}.example.com`;
    if (deliveryRouteOf(`https://${host}/`, 2) === route) return host;
  }
}

/**
 * webhook-matcher with DELIVERY_PARTITIONS=2 (ADR 0432): a job is published on the route of its
 * target's host, the subject worker i of 2 reads. A test delivery takes the target from the row;
 * the matching path, which knows only the webhook id, asks `DeliveryRoutes.of(id)`, answered
 * from the webhook-status KV mirror. Real billing-ledger, NATS and Postgres.
 */
describe('delivery routes: jobs go on the route of their target host', () => {
  let s: MatcherTestStack;
  let nc: NatsConnection;
  const seen: { subject: string; job: DeliveryJob }[] = [];

  beforeAll(async () => {
    s = await startMatcherStack({ DELIVERY_PARTITIONS: '2' });
    nc = await connect({ servers: testNatsUrl() });
    const prefix = new NatsNamespace(s.natsPrefix).subject('webhook.delivery.requested.v1');
    nc.subscribe(`${prefix}.>`, {
      callback: (_error, msg) => {
        seen.push({ subject: msg.subject.slice(prefix.length + 1), job: msg.json() });
      },
    });
  });

  afterAll(async () => {
    await nc?.close();
    await s?.close();
  });

  it("a test delivery is published on its webhook's route; the matching path's lookup (webhook id → route, through the status KV) agrees", async () => {
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
    const routes = s.app.get(DeliveryRoutes);
    await eventually(async () => webhooks.every((w) => routes.of(w.id) === w.route));
    expect(routes.of('wh_unknown')).toBe(0);
  });
});

import { deliveryRouteOf, KvBuckets, type DeliveryJob } from '@meridian/contracts';
import { JetStreamPublisher, NatsClient, NatsNamespace } from '@meridian/platform-messaging';
import { startAnvil, testNatsUrl, type AnvilInstance } from '@meridian/testing';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { DeliveryRoutes } from '../src/delivery-jobs/delivery-routes';
import { ChainFeed, sendMined } from './matcher-harness';
import { eventually, startMatcherStack, type MatcherTestStack } from './support/matcher-app';

jest.setTimeout(180_000);

const DEPLOYER = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const WATCHED = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
const ELSEWHERE = '0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc';
const PARTITIONS = 3;

/** A target host whose route among PARTITIONS workers is the last one (never the fallback 0). */
function hostOnLastRoute(): string {
  for (let i = 0; ; i++) {
    const host = `hooks-${i}.example.com`;
    if (deliveryRouteOf(`https://${host}/`, PARTITIONS) === PARTITIONS - 1) return host;
  }
}

/**
 * A webhook created a moment before its first event is routed to its host's delivery worker
 * even though its webhook-status entry has not reached this matcher's mirror yet (ADR 0432
 * amendment): the matching path takes the target from the match index, which the change feed
 * fills from the row before the block is matched. Here the entry never gets there: once the
 * mirror has loaded, the webhook-status bucket is deleted, so the create's put fails and the
 * mirror keeps its last (empty) state. Real billing-ledger, NATS, Postgres and anvil.
 */
describe("delivery routes: a webhook's first events go on its host's route before its status is mirrored", () => {
  let s: MatcherTestStack;
  let anvil: AnvilInstance;
  let nc: NatsConnection;
  let client: NatsClient;
  const seen: { subject: string; job: DeliveryJob }[] = [];

  beforeAll(async () => {
    anvil = await startAnvil({ chainId: 1, blockTime: 1 });
    s = await startMatcherStack({ DELIVERY_PARTITIONS: String(PARTITIONS) });
    nc = await connect({ servers: testNatsUrl() });
    const prefix = new NatsNamespace(s.natsPrefix).subject('webhook.delivery.requested.v1');
    nc.subscribe(`${prefix}.>`, {
      callback: (_error, msg) => {
        seen.push({ subject: msg.subject.slice(prefix.length + 1), job: msg.json() });
      },
    });
    client = new NatsClient({ url: testNatsUrl(), name: 'routes-before-status-test' });
    await client.connection();
  });

  afterAll(async () => {
    await nc?.close();
    await client?.close();
    await s?.close();
    await anvil?.stop();
  });

  it('the unconfirmed and confirmed jobs of a webhook absent from the mirror go on its route', async () => {
    const routes = s.app.get(DeliveryRoutes);
    await routes.loaded;
    const bucket = new NatsNamespace(s.natsPrefix).bucket(KvBuckets.webhookStatus.name);
    await (await jetstreamManager(nc)).streams.delete(`KV_${bucket}`);

    const { key } = await s.billing.createAccount({ plan: 'starter' });
    const created = await s.call('POST', '/webhooks', key, {
      network: 'eth-mainnet',
      trigger_type: 'address_activity',
      target_url: `https://${hostOnLastRoute()}/in`,
      addresses: [WATCHED],
      confirm_depth: 2,
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    // The mirror does not know the webhook: the old matching path routed its jobs to 0.
    expect(routes.of(id)).toBe(0);

    // The transfer's block, and a later one that confirms it at depth 2.
    const transfer = await sendMined(anvil.url, { from: DEPLOYER, to: WATCHED, value: '0x1' });
    const later = await sendMined(anvil.url, { from: DEPLOYER, to: ELSEWHERE, value: '0x1' });
    const feed = new ChainFeed(
      anvil.url,
      'eth-mainnet',
      new JetStreamPublisher(client, new NatsNamespace(s.natsPrefix)),
    );
    await feed.publishRange(
      Number.parseInt(transfer.blockNumber, 16),
      Number.parseInt(later.blockNumber, 16),
    );

    const matched = () => seen.filter((m) => !m.job.test);
    await eventually(async () => matched().length >= 2, 60_000).catch((error: Error) => {
      throw new Error(`${error.message}: jobs seen ${JSON.stringify(seen.map((m) => m.subject))}`);
    });
    expect(routes.of(id)).toBe(0);
    expect(
      matched()
        .map((m) => [m.job.webhookId, m.job.phase, m.job.route, m.subject])
        .sort(),
    ).toEqual([
      [id, 'confirmed', PARTITIONS - 1, `r${PARTITIONS - 1}`],
      [id, 'unconfirmed', PARTITIONS - 1, `r${PARTITIONS - 1}`],
    ]);
  });
});

import { DeliveryJobSchema, Subjects } from '@meridian/contracts';
import {
  JetStreamConsumers,
  JetStreamPublisher,
  NatsClient,
  NatsNamespace,
  NatsProbe,
} from '@meridian/platform-messaging';
import {
  sampleOf,
  startAnvil,
  startCuttableTcpRelay,
  storedMessages,
  testNatsUrl,
  type AnvilInstance,
  type CuttableTcpRelay,
} from '@meridian/testing';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { ChainFeed, sendMined } from './matcher-harness';
import { eventually, startMatcherStack, type MatcherTestStack } from './support/matcher-app';

jest.setTimeout(180_000);

const DEPLOYER = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const WATCHED = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
const NETWORK = 'eth-mainnet';

/**
 * NATS is not part of webhook-matcher's readiness (ADR 0212 amendment): with its NATS gone (a
 * relay to the test server, cut) the management API stays in the Service and answers, while
 * `nats_connected` says NATS is gone; a block the indexer published meanwhile is matched once
 * NATS is back, into exactly one delivery job.
 */
describe('webhook-matcher without NATS (real NATS behind a relay, real billing-ledger)', () => {
  let s: MatcherTestStack;
  let relay: CuttableTcpRelay;
  let anvil: AnvilInstance;
  let client: NatsClient;
  let jsm: JetStreamManager;
  let feed: ChainFeed;

  async function natsConnected(): Promise<number | undefined> {
    await s.app.get(NatsProbe).probe();
    const text = (await s.app.inject({ method: 'GET', url: '/metrics' })).body;
    return sampleOf(text, 'nats_connected', { service: 'webhook-matcher' });
  }
  async function jobsFor(webhookId: string) {
    const prefix = new NatsNamespace(s.natsPrefix).subject(Subjects.webhook.deliveryJob.base);
    const stored = await storedMessages(jsm, new NatsNamespace(s.natsPrefix).stream('WEBHOOK'));
    return stored
      .filter((m) => m.subject.startsWith(prefix))
      .map((m) => DeliveryJobSchema.parse(m.json()))
      .filter((job) => job.webhookId === webhookId);
  }

  /** The matcher's warn and error lines. */
  const logs: string[] = [];

  beforeAll(async () => {
    anvil = await startAnvil({ chainId: 1 });
    relay = await startCuttableTcpRelay(Number(new URL(testNatsUrl()).port || 4222));
    s = await startMatcherStack(
      { NATS_URL: `nats://127.0.0.1:${relay.port}`, NETWORKS: 'eth-mainnet' },
      {},
      logs,
    );
    client = new NatsClient({ url: testNatsUrl(), name: 'matcher-nats-outage-test' });
    jsm = await jetstreamManager(await client.connection());
    const publisher = new JetStreamPublisher(client, new NatsNamespace(s.natsPrefix));
    feed = new ChainFeed(anvil.url, NETWORK, publisher);
  });

  afterAll(async () => {
    await client?.close();
    await s?.close();
    await relay?.close();
    await anvil?.stop();
  });

  it('serves its API while NATS is gone, and matches what was published meanwhile once it is back', async () => {
    const { key } = await s.billing.createAccount({ plan: 'starter' });
    const created = await s.call('POST', '/webhooks', key, {
      network: NETWORK,
      trigger_type: 'address_activity',
      target_url: 'https://hooks.example.com/in',
      addresses: [WATCHED],
      confirm_depth: 2,
    });
    expect(created.status).toBe(201);
    const webhookId = created.body['id'] as string;
    await eventually(
      async () => (await natsConnected()) === 1 && s.app.get(JetStreamConsumers).attached(),
      30_000,
    );

    await relay.cut();
    await eventually(async () => (await natsConnected()) === 0, 10_000);

    const ready = await s.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.body).not.toMatch(/nats|consumer:|kv:/);
    const listed = await s.call('GET', '/webhooks', key);
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.body)).toContain(webhookId);
    const list = await s.call('POST', '/address-lists', key, {
      name: 'during-the-outage',
      addresses: [WATCHED],
    });
    expect(list.status).toBe(201);
    // A write answers without waiting for its status KV put, which could only time out after
    // JetStream's 5 s (the status tick publishes it once NATS is back). No clock here: a put
    // awaited would have failed and said so before the answer.
    const second = await s.call('POST', '/webhooks', key, {
      network: NETWORK,
      trigger_type: 'address_activity',
      target_url: 'https://hooks.example.com/second',
      addresses: [WATCHED],
      confirm_depth: 2,
    });
    expect(second.status).toBe(201);
    expect(logs.filter((line) => line.includes('webhook status not published yet'))).toEqual([]);

    // A test delivery is a job on NATS: refused, retryably, not a 500 (nothing half-written).
    const test = await s.call('POST', `/webhooks/${webhookId}/test`, key);
    expect([test.status, test.body['error']]).toEqual([503, 'messaging_unavailable']);

    // The indexer publishes a block with a transfer to the watched address meanwhile.
    const sent = await sendMined(anvil.url, { from: DEPLOYER, to: WATCHED, value: '0x10' });
    const block = await feed.publishBlock(await feed.block(await feed.head()));
    expect(await jobsFor(webhookId)).toEqual([]);
    expect((await s.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);

    await relay.restore();
    await eventually(async () => (await natsConnected()) === 1, 30_000);
    await eventually(async () => (await jobsFor(webhookId)).length > 0, 30_000);
    // The status of the webhook made meanwhile reaches KV (delivery-worker reads it there).
    await eventually(
      async () =>
        (
          await s.dataSource.query(
            'SELECT published_version >= version AS published FROM webhooks.webhooks WHERE id = $1',
            [second.body['id']],
          )
        )[0]?.published === true,
      30_000,
    );
    const jobs = await jobsFor(webhookId);
    expect(jobs.map((job) => [job.phase, job.payload.block.hash, job.payload.raw['hash']])).toEqual(
      [['unconfirmed', block.hash, sent['transactionHash']]],
    );
  });
});

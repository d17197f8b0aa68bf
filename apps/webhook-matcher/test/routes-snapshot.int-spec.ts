import { deliveryRouteOf, KvBuckets, type DeliveryJob } from '@meridian/contracts';
import { createHttpApp } from '@meridian/platform-http';
import {
  JetStreamPublisher,
  NatsClient,
  NatsNamespace,
  provisionMessaging,
} from '@meridian/platform-messaging';
import {
  deleteNatsNamespace,
  startAnvil,
  testNatsUrl,
  type AnvilInstance,
} from '@meridian/testing';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import pino from 'pino';
import { AppModule } from '../src/app.module';
import { DeliveryRoutes } from '../src/delivery-jobs/delivery-routes';
import { ChainFeed, sendMined } from './matcher-harness';
import { eventually, startMatcherStack, type MatcherTestStack } from './support/matcher-app';

jest.setTimeout(180_000);

const DEPLOYER = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const WATCHED = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';

/** A target host whose route among 2 workers is 1 (the fallback route is 0). */
function hostOnRoute1(): string {
  for (let i = 0; ; i++) {
    const host = `hooks-${i}.example.com`;
    if (deliveryRouteOf(`https://${host}/`, 2) === 1) return host;
  }
}

/**
 * No block is matched before the delivery routes' targets are in memory (ADR 0212 amendment,
 * ADR 0432). A matcher started while NATS was away meets a backlog of blocks when NATS returns;
 * a job matched before its webhook's status entry was in the mirror went on route 0, to a
 * worker other than its host's. Here the snapshot is held back by the webhook-status bucket
 * being absent (the mirror retries every 2 s) while the block is already on the stream, and a
 * second matcher, on the same database and namespace, starts after the first one stopped.
 */
describe('delivery routes: a backlog waits for the webhook-status snapshot', () => {
  let s: MatcherTestStack;
  let anvil: AnvilInstance;
  let nc: NatsConnection;
  let client: NatsClient;
  let second: NestFastifyApplication | undefined;
  const seen: { subject: string; job: DeliveryJob }[] = [];

  beforeAll(async () => {
    anvil = await startAnvil({ chainId: 1, blockTime: 1 });
    s = await startMatcherStack({ DELIVERY_PARTITIONS: '2' });
    nc = await connect({ servers: testNatsUrl() });
    const prefix = new NatsNamespace(s.natsPrefix).subject('webhook.delivery.requested.v1');
    nc.subscribe(`${prefix}.>`, {
      callback: (_error, msg) => {
        seen.push({ subject: msg.subject.slice(prefix.length + 1), job: msg.json() });
      },
    });
    client = new NatsClient({ url: testNatsUrl(), name: 'routes-snapshot-test' });
    await client.connection();
  });

  afterAll(async () => {
    await second?.close();
    await nc?.close();
    await client?.close();
    // The first app is closed by the test; the rest of the stack is closed here.
    await s?.billing.stop();
    await s?.db.drop();
    if (s) await deleteNatsNamespace(testNatsUrl(), s.natsPrefix);
    await anvil?.stop();
  });

  it("a job of a block matched at start goes on its host's route once the statuses load", async () => {
    const { key } = await s.billing.createAccount({ plan: 'starter' });
    const created = await s.call('POST', '/webhooks', key, {
      network: 'eth-mainnet',
      trigger_type: 'address_activity',
      target_url: `https://${hostOnRoute1()}/in`,
      addresses: [WATCHED],
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    await eventually(async () => s.app.get(DeliveryRoutes).of(id) === 1);

    // The entry as the first matcher wrote it, then the first matcher and the bucket go.
    const bucket = new NatsNamespace(s.natsPrefix).bucket(KvBuckets.webhookStatus.name);
    const entry = (await (await new Kvm(nc).open(bucket)).get(id))!.value;
    await s.app.close();
    const jsm = await jetstreamManager(nc);
    await jsm.streams.delete(`KV_${bucket}`);

    // The backlog: the transfer's block is on CHAIN before the second matcher starts.
    const receipt = await sendMined(anvil.url, { from: DEPLOYER, to: WATCHED, value: '0x1' });
    const number = Number.parseInt(receipt.blockNumber, 16);
    await new ChainFeed(
      anvil.url,
      'eth-mainnet',
      new JetStreamPublisher(client, new NatsNamespace(s.natsPrefix)),
    ).publishRange(number, number);

    const logger = pino({ level: process.env['TEST_LOG_LEVEL'] ?? 'silent' });
    second = await createHttpApp(AppModule.forRoot(s.config, logger, { clock: s.clock }), {
      logger,
    });
    await second.init();
    const matched = () => seen.filter((m) => !m.job.test);
    // The old start matched the block at once (the index loads in milliseconds) and put its
    // job on r0; nothing may be published while the targets are unknown.
    await expect(eventually(async () => matched().length > 0, 3_000)).rejects.toThrow(
      'condition not met in time',
    );

    await provisionMessaging(jsm, s.natsPrefix, { buckets: [KvBuckets.webhookStatus] });
    await (await new Kvm(nc).open(bucket)).put(id, entry);
    await eventually(async () => matched().length >= 1, 60_000);
    expect(matched().map((m) => [m.job.webhookId, m.job.route, m.subject])).toEqual([
      [id, 1, 'r1'],
    ]);
  });
});

import { Events, Streams, type ChainBlock } from '@meridian/contracts';
import {
  JetStreamPublisher,
  NatsClient,
  NatsNamespace,
  provisionMessaging,
} from '@meridian/platform-messaging';
import { sampleOf, startAnvil, testNatsUrl, type AnvilInstance } from '@meridian/testing';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { ChainFeed, rpc } from './matcher-harness';
import { eventually, startMatcherStack, type MatcherTestStack } from './support/matcher-app';

jest.setTimeout(180_000);

const DEPLOYER = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const WATCHED = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
const NETWORK = 'eth-mainnet';

/**
 * webhook-matcher's pipeline metrics (README "Metrics") read from the app's own /metrics while
 * real anvil blocks go through it: the app in-process with its FakeClock, the real
 * billing-ledger, NATS and Postgres. The CHAIN messages are built from anvil's blocks as the
 * indexer publishes them (matcher-harness `ChainFeed`), with `publishedAt` set on the app's
 * clock so the lag is exact; no test waits for a time rule.
 */
describe('pipeline metrics on /metrics', () => {
  let s: MatcherTestStack;
  let anvil: AnvilInstance;
  let client: NatsClient;
  let jsm: JetStreamManager;
  let publisher: JetStreamPublisher;
  let feed: ChainFeed;

  /** One sample of the app's /metrics (`sampleOf`: exactly these labels), NaN when there is none. */
  async function sample(name: string, labels: Record<string, string> = {}): Promise<number> {
    const text = (await s.app.inject({ method: 'GET', url: '/metrics' })).body;
    return sampleOf(text, name, { service: 'webhook-matcher', ...labels }) ?? NaN;
  }
  const net = { network: NETWORK };

  /** The block `number` of anvil as the indexer publishes it, `waited` ms before the app's now. */
  async function publishBlock(number: number, waitedMs: number): Promise<ChainBlock> {
    const block = {
      ...(await feed.block(number)),
      publishedAt: new Date(s.clock.now().getTime() - waitedMs).toISOString(),
    };
    await publisher.publish(Events.chainBlock, block);
    return block;
  }

  beforeAll(async () => {
    anvil = await startAnvil({ chainId: 1 });
    s = await startMatcherStack({ NETWORKS: 'eth-mainnet,polygon-mainnet' });
    client = new NatsClient({ url: testNatsUrl(), name: 'pipeline-metrics-test' });
    jsm = await jetstreamManager(await client.connection());
    publisher = new JetStreamPublisher(client, new NatsNamespace(s.natsPrefix));
    feed = new ChainFeed(anvil.url, NETWORK, publisher);
  });

  afterAll(async () => {
    await client?.close();
    await s?.close();
    await anvil?.stop();
  });

  it('from the start: the stall clock of every network served, the partition consuming', async () => {
    const started = s.clock.now().getTime() / 1000;
    for (const network of ['eth-mainnet', 'polygon-mainnet'])
      expect(await sample('webhook_matcher_last_step_success_timestamp_seconds', { network })).toBe(
        started,
      );
    expect(await sample('webhook_matcher_delivery_job_publish_failures_total', net)).toBe(0);
    await eventually(
      async () => (await sample('webhook_matcher_partition_consuming', { partition: '0/1' })) === 1,
      30_000,
    );
  });

  it('a block through the matcher: its number and time, the lag, the counts, a dropped event with its reason; a refused publish counted and the step clock frozen until it goes', async () => {
    // The free plan: 1 event a second, a burst of 12; the budget runs on block time, so 14
    // transfers in one block are 12 events published and 2 dropped by the budget.
    const { key } = await s.billing.createAccount({ plan: 'free' });
    const created = await s.call('POST', '/webhooks', key, {
      network: NETWORK,
      trigger_type: 'address_activity',
      target_url: 'https://hooks.example.com/in',
      addresses: [WATCHED],
      confirm_depth: 2,
    });
    expect(created.status).toBe(201);
    await rpc(anvil.url, 'evm_setAutomine', [false]);
    for (let i = 0; i < 14; i++)
      await rpc(anvil.url, 'eth_sendTransaction', [
        { from: DEPLOYER, to: WATCHED, value: `0x${(i + 1).toString(16)}` },
      ]);
    await rpc(anvil.url, 'evm_mine');
    await rpc(anvil.url, 'evm_setAutomine', [true]);
    const number = await feed.head();

    s.clock.advance(5 * 60_000);
    const matchedAt = s.clock.now().getTime() / 1000;
    const block = await publishBlock(number, 42_000);
    await eventually(
      async () => (await sample('webhook_matcher_blocks_matched_total', net)) === 1,
      30_000,
    );
    expect(await sample('webhook_matcher_last_block_number', net)).toBe(number);
    expect(await sample('webhook_matcher_last_block_timestamp_seconds', net)).toBe(block.timestamp);
    expect(await sample('webhook_matcher_lag_seconds', net)).toBe(42);
    expect(await sample('webhook_matcher_last_step_success_timestamp_seconds', net)).toBe(
      matchedAt,
    );
    expect(await sample('webhook_matcher_events_matched_total', net)).toBe(14);
    expect(
      await sample('webhook_matcher_events_dropped_total', { ...net, reason: 'rate_limited' }),
    ).toBe(2);
    expect(
      await sample('webhook_matcher_delivery_jobs_published_total', {
        ...net,
        outcome: 'published',
      }),
    ).toBe(12);
    expect(await sample('webhook_matcher_delivery_job_publish_failures_total', net)).toBe(0);
    // The other network saw no block: its gauges are the start's.
    expect(await sample('webhook_matcher_last_block_number', { network: 'polygon-mainnet' })).toBe(
      NaN,
    );

    // NATS refuses the jobs (the WEBHOOK stream is gone): the failure is counted and the block
    // retried; the step clock and the block gauges stay where the last block that went left them.
    await jsm.streams.delete(new NatsNamespace(s.natsPrefix).stream(Streams.WEBHOOK.name));
    // Stamped one second after the dense block: one token back, so its one event passes.
    await rpc(anvil.url, 'evm_setAutomine', [false]);
    await rpc(anvil.url, 'eth_sendTransaction', [{ from: DEPLOYER, to: WATCHED, value: '0x99' }]);
    await rpc(anvil.url, 'evm_mine', [block.timestamp + 1]);
    await rpc(anvil.url, 'evm_setAutomine', [true]);
    const next = await feed.head();
    s.clock.advance(60_000);
    await publishBlock(next, 1_500);
    await eventually(
      async () => (await sample('webhook_matcher_delivery_job_publish_failures_total', net)) >= 1,
      30_000,
    );
    expect(await sample('webhook_matcher_last_step_success_timestamp_seconds', net)).toBe(
      matchedAt,
    );
    expect(await sample('webhook_matcher_last_block_number', net)).toBe(number);
    expect(await sample('webhook_matcher_blocks_matched_total', net)).toBe(1);

    // The stream back: the retried block goes through. Its event was recorded on the first try
    // and is not counted twice; its job and the 12 confirmations of the block before go out.
    await provisionMessaging(jsm, s.natsPrefix, { streams: [Streams.WEBHOOK] });
    await eventually(
      async () => (await sample('webhook_matcher_blocks_matched_total', net)) === 2,
      60_000,
    );
    expect(await sample('webhook_matcher_last_block_number', net)).toBe(next);
    expect(await sample('webhook_matcher_lag_seconds', net)).toBe(1.5);
    expect(await sample('webhook_matcher_last_step_success_timestamp_seconds', net)).toBe(
      matchedAt + 60,
    );
    expect(await sample('webhook_matcher_events_matched_total', net)).toBe(15);
    expect(
      await sample('webhook_matcher_events_dropped_total', { ...net, reason: 'rate_limited' }),
    ).toBe(2);
    expect(
      await sample('webhook_matcher_delivery_jobs_published_total', {
        ...net,
        outcome: 'published',
      }),
    ).toBe(12 + 1 + 12);
  });
});

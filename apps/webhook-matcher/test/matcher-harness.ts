import { randomBytes } from 'node:crypto';
import {
  Events,
  Streams,
  Subjects,
  chainBlockId,
  chainRemovedId,
  DeliveryJobSchema,
  type ChainBlock,
  type DeliveryJob,
  type KvBucketDeclaration,
  SINGLE_PARTITION,
  type Partition,
} from '@meridian/contracts';
import { createAppDataSource, runMigrations } from '@meridian/platform-db';
import {
  ConsumerRunner,
  JetStreamPublisher,
  type ConsumerHandler,
  NatsClient,
  NatsNamespace,
  provisionMessaging,
} from '@meridian/platform-messaging';
import {
  createTestDatabase,
  FakeClock,
  storedMessages,
  testNatsUrl,
  type TestDatabase,
} from '@meridian/testing';
import { normalizeFilter } from '@meridian/webhooks';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { DataSource } from 'typeorm';
import { dataSourceOptions, SCHEMA } from '../src/db/data-source';
import { DeliveryJobPublisher } from '../src/delivery-jobs/delivery-job.publisher';
import { chainBlocksConsumer, chainBlocksHandler } from '../src/matching/chain-blocks.consumer';
import { MatchingEngine } from '../src/matching/matching.engine';
import { MatchingRepository } from '../src/matching/matching.repository';
import { EventsBudget } from '../src/throttling/events-budget';
import { chainAndNetwork, WEBHOOK_NETWORKS } from '../src/webhooks/networks';

export async function rpc<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

/**
 * Sends a transaction from one of anvil's unlocked accounts and answers with its receipt once it
 * is mined (eth_sendTransactionSync, EIP-7966). eth_sendTransaction answers as soon as the
 * transaction is in the pool and the miner takes it on its own task, so a head read right after
 * can still be the block before (measured: 12 in 200 sends on this machine, 17 in 200 with two
 * cores busy; always with interval mining). Publish `blockNumber` of the receipt, not the head.
 */
export async function sendMined(
  anvilUrl: string,
  tx: Record<string, string>,
): Promise<Record<string, unknown> & { blockNumber: string; transactionHash: string }> {
  return rpc(anvilUrl, 'eth_sendTransactionSync', [tx]);
}

export async function until<T>(
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  what: string,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Stands in for chain-indexer: builds the CHAIN messages the indexer publishes from real anvil
 * blocks (eth_getBlockByNumber with transactions + eth_getBlockReceipts) and publishes them
 * with the indexer's ids, the reorg generation included (ADR 0412), under a network key as the
 * indexer's NETWORKS names it (the webhooks' `network`, never a letter code).
 */
export class ChainFeed {
  /** Reorgs published so far: ids carry `:g<n>` from the first on, as the indexer's do. */
  private generation = 0;

  constructor(
    private readonly anvilUrl: string,
    private readonly network: string,
    private readonly publisher: JetStreamPublisher,
  ) {}

  async block(number: number): Promise<ChainBlock> {
    const tag = `0x${number.toString(16)}`;
    const raw = await rpc<Record<string, unknown>>(this.anvilUrl, 'eth_getBlockByNumber', [
      tag,
      true,
    ]);
    const receipts = await rpc<Record<string, unknown>[]>(this.anvilUrl, 'eth_getBlockReceipts', [
      tag,
    ]);
    return {
      id: chainBlockId(this.network, raw['hash'] as string, 0, this.generation),
      network: this.network,
      number,
      hash: raw['hash'] as string,
      parentHash: raw['parentHash'] as string,
      timestamp: Number.parseInt(raw['timestamp'] as string, 16),
      transactions: raw['transactions'] as ChainBlock['transactions'],
      receipts: receipts as ChainBlock['receipts'],
      part: { index: 0, count: 1 },
      publishedAt: new Date().toISOString(),
    };
  }

  async head(): Promise<number> {
    return Number.parseInt(await rpc<string>(this.anvilUrl, 'eth_blockNumber'), 16);
  }

  /** Publishes blocks from..to (inclusive) as canonical; returns them. */
  async publishRange(from: number, to: number): Promise<ChainBlock[]> {
    const out: ChainBlock[] = [];
    for (let n = from; n <= to; n++) out.push(await this.publishBlock(await this.block(n)));
    return out;
  }

  /** Publishes a block (again: a branch the chain returns to) under the current generation. */
  async publishBlock(block: ChainBlock): Promise<ChainBlock> {
    const message = {
      ...block,
      id: chainBlockId(this.network, block.hash, 0, this.generation),
      publishedAt: new Date().toISOString(),
    };
    await this.publisher.publish(Events.chainBlock, message);
    return message;
  }

  /** The removal of a reorg: orphaned blocks (given oldest first) listed newest first. */
  async publishRemoval(
    orphaned: readonly ChainBlock[],
    ancestor: ChainBlock,
    newHead: { number: number; hash: string },
  ): Promise<void> {
    this.generation += 1;
    await this.publisher.publish(Events.chainBlocksRemoved, {
      id: chainRemovedId(this.network, newHead.hash, this.generation),
      network: this.network,
      removed: [...orphaned].reverse().map((b) => ({ number: b.number, hash: b.hash })),
      commonAncestor: { number: ancestor.number, hash: ancestor.hash },
      newHead: { number: newHead.number, hash: newHead.hash },
      detectedAt: new Date().toISOString(),
    });
  }

  /** A reorg as the indexer reports it: the orphaned blocks newest first, then the new branch. */
  async publishReorg(orphaned: ChainBlock[], ancestor: ChainBlock): Promise<ChainBlock[]> {
    const head = await this.head();
    await this.publishRemoval(orphaned, ancestor, await this.block(head));
    return this.publishRange(ancestor.number + 1, head);
  }

  /**
   * An empty block extending `parent` on a branch the node no longer holds (anvil cannot go
   * back to an orphaned branch; the indexer would publish exactly this when a node does).
   */
  childOf(parent: ChainBlock): ChainBlock {
    const hash = `0x${randomBytes(32).toString('hex')}`;
    return {
      id: chainBlockId(this.network, hash, 0, this.generation),
      network: this.network,
      number: parent.number + 1,
      hash,
      parentHash: parent.hash,
      timestamp: parent.timestamp + 1,
      transactions: [],
      receipts: [],
      part: { index: 0, count: 1 },
      publishedAt: new Date().toISOString(),
    };
  }
}

export interface Matcher {
  engine: MatchingEngine;
  /** Counts what this replica published and what the stream refused as a duplicate id. */
  jobs: DeliveryJobPublisher;
  runner: ConsumerRunner;
  stop(): Promise<void>;
}

/** Database, NATS namespace and the matcher's parts, all real. */
export class MatcherHarness {
  db!: TestDatabase;
  ds!: DataSource;
  client!: NatsClient;
  jsm!: JetStreamManager;
  ns!: NatsNamespace;
  publisher!: JetStreamPublisher;
  prefix = `t${randomBytes(5).toString('hex')}`;
  readonly clock = new FakeClock();
  /** The CHAIN durables' ack wait, provisioned and given to the runners (set before start). */
  ackWaitMs = 10_000;
  private readonly matchers: Matcher[] = [];

  /** `buckets`: KV buckets a real neighbour needs (the indexer's leases). */
  async start(
    partitions: readonly Partition[] = [SINGLE_PARTITION],
    buckets: readonly KvBucketDeclaration[] = [],
  ): Promise<void> {
    this.db = await createTestDatabase({ prefix: 'wh_matching' });
    this.ds = createAppDataSource(dataSourceOptions(this.db.url));
    await this.ds.initialize();
    await runMigrations(this.ds, SCHEMA);
    this.client = new NatsClient({ url: testNatsUrl(), name: 'matcher-int-spec' });
    this.jsm = await jetstreamManager(await this.client.connection());
    this.ns = new NatsNamespace(this.prefix);
    this.publisher = new JetStreamPublisher(this.client, this.ns);
    await provisionMessaging(this.jsm, this.prefix, {
      streams: [Streams.CHAIN, Streams.WEBHOOK],
      buckets,
      consumers: partitions.map((p) => ({ ...chainBlocksConsumer(p), ackWaitMs: this.ackWaitMs })),
    });
  }

  /** `around`: wraps the consumer's handler (a test's slow step). */
  async matcher(
    partition: Partition = SINGLE_PARTITION,
    around: (handler: ConsumerHandler) => ConsumerHandler = (handler) => handler,
  ): Promise<Matcher> {
    const jobs = new DeliveryJobPublisher(this.publisher);
    const engine = new MatchingEngine(
      new MatchingRepository(this.ds),
      jobs,
      new EventsBudget(),
      this.clock,
      partition,
    );
    await engine.load();
    const runner = new ConsumerRunner(
      { ...chainBlocksConsumer(partition), ackWaitMs: this.ackWaitMs, backoffMs: [100] },
      around(chainBlocksHandler(engine)),
      { client: this.client, namespace: this.ns, publisher: this.publisher, retryDelayMs: 100 },
    );
    runner.start();
    const m: Matcher = { engine, jobs, runner, stop: () => runner.stop() };
    this.matchers.push(m);
    return m;
  }

  /** Every delivery job on the WEBHOOK stream, in stream order. */
  async jobs(): Promise<DeliveryJob[]> {
    const prefix = this.ns.subject(Subjects.webhook.deliveryJob.base);
    const stored = await storedMessages(this.jsm, this.ns.stream('WEBHOOK'));
    return stored
      .filter((m) => m.subject.startsWith(prefix))
      .map((m) => DeliveryJobSchema.parse(m.json()));
  }

  /** Sequence of the last CHAIN message the consumer acked (the matcher caught up to it). */
  async caughtUp(partition: Partition = SINGLE_PARTITION): Promise<boolean> {
    const chain = await this.jsm.streams.info(this.ns.stream('CHAIN'));
    const consumer = await this.jsm.consumers.info(
      this.ns.stream('CHAIN'),
      this.ns.consumer(chainBlocksConsumer(partition).durable),
    );
    return consumer.ack_floor.stream_seq >= chain.state.last_seq;
  }

  /**
   * Writes a webhook as the management API stores it (H4's tables) and its change-feed row,
   * through the API's own rules for the network key (a code the API refuses fails here too) and
   * the filter (trigger type included).
   */
  async createWebhook(w: {
    id: string;
    accountId: string;
    network: string;
    filters?: unknown;
    addresses?: string[];
    listRefs?: string[];
    triggerType?: string;
    confirmDepth?: number;
    phases?: string[];
  }): Promise<void> {
    const { chain, network } = chainAndNetwork(undefined, w.network, WEBHOOK_NETWORKS);
    const triggerType = w.triggerType ?? 'address_activity';
    const filter = normalizeFilter({
      filters: w.filters,
      addresses: w.addresses,
      list_refs: w.listRefs,
      trigger_type: triggerType,
    });
    await this.ds.transaction(async (m) => {
      await m.query(
        `INSERT INTO webhooks.webhooks (id, account_id, status, chain, network, trigger_type,
           filters, addresses, list_refs, filter_tree, inline_address_count, confirm_depth, phases,
           target_url, secret_sealed, created_at, updated_at)
         VALUES ($1, $2, 'active', $12, $3, $4, $5, $6, $7, $8, $9, $10, $11,
           'https://hooks.example.org/in', 'sealed', now(), now())`,
        [
          w.id,
          w.accountId,
          network,
          triggerType,
          filter.filters === null ? null : JSON.stringify(filter.filters),
          filter.addresses,
          filter.listRefs,
          JSON.stringify(filter.tree),
          filter.inlineAddresses,
          w.confirmDepth ?? 2,
          w.phases ?? ['unconfirmed', 'confirmed'],
          chain,
        ],
      );
      await m.query(`INSERT INTO webhooks.change_log (account_id, webhook_id) VALUES ($1, $2)`, [
        w.accountId,
        w.id,
      ]);
    });
  }

  async setStatus(accountId: string, webhookId: string, status: string): Promise<void> {
    await this.ds.transaction(async (m) => {
      await m.query(`UPDATE webhooks.webhooks SET status = $2 WHERE id = $1`, [webhookId, status]);
      await m.query(`INSERT INTO webhooks.change_log (account_id, webhook_id) VALUES ($1, $2)`, [
        accountId,
        webhookId,
      ]);
    });
  }

  async createList(accountId: string, listId: string, addresses: string[]): Promise<void> {
    await this.ds.query(
      `INSERT INTO webhooks.address_lists (id, account_id, name, created_at, updated_at)
       VALUES ($1, $2, $1, now(), now())`,
      [listId, accountId],
    );
    await this.addToList(accountId, listId, addresses);
  }

  async addToList(accountId: string, listId: string, addresses: string[]): Promise<void> {
    await this.ds.transaction(async (m) => {
      await m.query(
        `INSERT INTO webhooks.address_list_entries (list_id, address)
         SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING`,
        [listId, addresses.map((a) => a.toLowerCase())],
      );
      await m.query(`INSERT INTO webhooks.change_log (account_id, list_id) VALUES ($1, $2)`, [
        accountId,
        listId,
      ]);
    });
  }

  async setEventCaps(
    accountId: string,
    eventsPerSecond: number,
    eventsBurst: number,
  ): Promise<void> {
    await this.ds.query(
      `INSERT INTO webhooks.accounts (account_id, caps) VALUES ($1, $2)
       ON CONFLICT (account_id) DO UPDATE SET caps = EXCLUDED.caps`,
      [accountId, JSON.stringify({ eventsPerSecond, eventsBurst })],
    );
  }

  async stop(): Promise<void> {
    await Promise.all(this.matchers.splice(0).map((m) => m.stop()));
    for await (const name of this.jsm.streams.names())
      if (name.includes(this.prefix)) await this.jsm.streams.delete(name);
    await this.client.close();
    await this.ds.destroy();
    await this.db.drop();
  }
}

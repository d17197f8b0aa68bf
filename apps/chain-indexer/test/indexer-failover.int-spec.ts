import { startAnvil, type AnvilInstance } from '@meridian/testing';
import {
  canonicalFrom,
  ChainStream,
  createWorld,
  nodeHashes,
  rpc,
  startIndexer,
  waitUntil,
  type IndexerProcess,
  type World,
} from './indexer-harness';

const UPSTREAM = (anvil: AnvilInstance) => ({
  NETWORKS: 'eth-mainnet',
  UPSTREAMS: JSON.stringify({ 'eth-mainnet': [anvil.url] }),
});

/** Mines a block every `everyMs` until stopped (a chain that keeps moving under the indexer). */
function miner(anvil: AnvilInstance, everyMs: number) {
  let running = true;
  const loop = (async () => {
    while (running) {
      await rpc(anvil.url, 'anvil_mine', ['0x1']);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

describe('chain-indexer crash, restart and replicas', () => {
  let anvil: AnvilInstance;
  let world: World;
  let stream: ChainStream;
  const processes: IndexerProcess[] = [];

  const headNumber = async () => Number(await rpc<string>(anvil.url, 'eth_blockNumber'));
  const lastPublished = async () =>
    (await stream.all()).filter((m) => m.kind === 'block').slice(-1)[0]?.body.number;
  const expectNoGapNoDuplicate = async () => {
    const messages = await stream.all();
    // Counted by message id as stored: every id exactly once.
    expect(new Set(messages.map((m) => m.msgId)).size).toBe(messages.length);
    const published = canonicalFrom(messages); // throws on a gap or a repeat
    const heights = [...published.keys()].sort((a, b) => a - b);
    expect(heights).toEqual(Array.from({ length: heights.length }, (_, i) => heights[0]! + i));
    expect(heights[heights.length - 1]).toBe(await headNumber());
    expect(published).toEqual(await nodeHashes(anvil.url, heights));
    return messages;
  };
  const start = async (env: Record<string, string> = {}) => {
    const indexer = await startIndexer(world, { ...UPSTREAM(anvil), ...env });
    processes.push(indexer);
    return indexer;
  };

  beforeEach(async () => {
    anvil = await startAnvil({ chainId: 1 });
    world = await createWorld();
    stream = await ChainStream.open(world);
  }, 60_000);

  afterEach(async () => {
    await Promise.all(processes.splice(0).map((p) => p.kill('SIGKILL')));
    await stream?.close();
    await anvil?.stop();
    await world?.cleanup();
  });

  it('kill -9 mid-stream, then a restart: no gap, no duplicate; the gap is backfilled at the bounded rate', async () => {
    const first = await start({ BACKFILL_BLOCKS_PER_SECOND: '1000' });
    const mining = miner(anvil, 40);
    await waitUntil(async () => (await stream.all()).length >= 20, 30_000, '20 blocks');
    await first.kill('SIGKILL');
    const killedAt = (await lastPublished())!;
    // Downtime: the chain moves on.
    await rpc(anvil.url, 'anvil_mine', ['0x28']);
    await mining.stop();
    const gap = (await headNumber()) - killedAt;
    expect(gap).toBeGreaterThanOrEqual(40);

    const restartedAt = Date.now();
    const second = await start({ BACKFILL_BLOCKS_PER_SECOND: '25' });
    const head = await headNumber();
    await waitUntil(async () => (await lastPublished()) === head, 60_000, 'catch up');
    const catchUpMs = Date.now() - restartedAt;

    await expectNoGapNoDuplicate();
    // 25 blocks/s with a burst of 25: the gap cannot be published faster than its rate allows.
    expect(catchUpMs).toBeGreaterThanOrEqual(((gap - 25) / 25) * 1000);
    const metrics = await (await fetch(`http://127.0.0.1:${second.port}/metrics`)).text();
    const backfilled =
      /chain_indexer_blocks_published_total\{[^}]*mode="backfill"[^}]*\} (\d+)/.exec(metrics);
    expect(Number(backfilled?.[1])).toBeGreaterThanOrEqual(gap - 2);
    expect(metrics).toMatch(/chain_indexer_backfill_remaining_blocks\{[^}]*\} 0/);
  }, 120_000);

  it('two replicas: one publishes; after kill -9 of it the other takes over with no gap', async () => {
    await rpc(anvil.url, 'anvil_mine', ['0x2']);
    const [a, b] = await Promise.all([
      start({ REPLICA_ID: 'replica-a' }),
      start({ REPLICA_ID: 'replica-b' }),
    ]);
    const mining = miner(anvil, 60);
    await waitUntil(async () => (await stream.all()).length >= 15, 30_000, '15 blocks');
    const leaders = [a, b].filter((p) => p.lines.some((l) => l.msg === 'leading network'));
    expect(leaders).toHaveLength(1);
    const leader = leaders[0]!;
    const follower = leader === a ? b : a;

    await leader.kill('SIGKILL');
    await waitUntil(
      () => follower.lines.some((l) => l.msg === 'leading network'),
      20_000,
      'takeover',
    );
    await mining.stop();
    const head = await headNumber();
    await waitUntil(
      async () => (await lastPublished()) === head,
      30_000,
      'catch up after takeover',
    );
    await expectNoGapNoDuplicate();
  }, 120_000);
});

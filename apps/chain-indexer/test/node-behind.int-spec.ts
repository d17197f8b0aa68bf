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
import { startLaggingUpstream } from './lagging-upstream';

const WINDOW = 97;
const ALICE = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const BOB = '0x70997970c51812dc3a635b855187f9447955c4f2';
const BEHIND_LOG = 'node head below the block window: waiting for the node to pass the cursor';
const DEEP_LOG = 'reorg deeper than the block window: no block of the window is on the node chain';

/**
 * A node whose head is more than the window below the cursor (README "A node behind the
 * cursor"): a devnet reset under a reused database, or a lagging node after a failover.
 */
describe('chain-indexer, node head more than the window below the cursor', () => {
  let old: AnvilInstance; // the chain the cursor was made on: 200 blocks
  const anvils: AnvilInstance[] = [];
  const worlds: World[] = [];
  const streams: ChainStream[] = [];
  const processes: IndexerProcess[] = [];
  const env = (url: string, policy: 'halt' | 'resync') => ({
    NETWORKS: 'eth-mainnet',
    UPSTREAMS: JSON.stringify({ 'eth-mainnet': [url] }),
    WINDOW_BLOCKS: String(WINDOW),
    START_BLOCKS_BEHIND: '110',
    BACKFILL_BLOCKS_PER_SECOND: '1000',
    DEEP_REORG_POLICY: policy,
  });
  const headOf = async (anvil: AnvilInstance) =>
    Number(await rpc<string>(anvil.url, 'eth_blockNumber'));
  const metric = async (indexer: IndexerProcess, name: string) => {
    const text = await (await fetch(`http://127.0.0.1:${indexer.port}/metrics`)).text();
    return Number(new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, 'm').exec(text)?.[1]);
  };
  const lastNumber = async (stream: ChainStream) => (await stream.all()).slice(-1)[0]?.body.number;
  const fresh = async (blocks: number) => {
    const anvil = await startAnvil({ chainId: 1 });
    anvils.push(anvil);
    await rpc(anvil.url, 'anvil_mine', [`0x${blocks.toString(16)}`]);
    return anvil;
  };
  const open = async () => {
    const world = await createWorld();
    worlds.push(world);
    const stream = await ChainStream.open(world);
    streams.push(stream);
    return { world, stream };
  };
  const start = async (world: World, url: string, policy: 'halt' | 'resync') => {
    const indexer = await startIndexer(world, env(url, policy));
    processes.push(indexer);
    return indexer;
  };

  beforeAll(async () => {
    old = await fresh(200);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.kill('SIGKILL')));
    await Promise.all(streams.map((s) => s.close()));
    await Promise.all(anvils.map((a) => a.stop()));
    await Promise.all(worlds.map((w) => w.cleanup()));
  });

  it('resync: a fresh chain below the window is a deep reorg; its blocks are published', async () => {
    const { world, stream } = await open();
    const first = await start(world, old.url, 'resync');
    await waitUntil(async () => (await lastNumber(stream)) === 200, 60_000, 'initial backfill');
    await first.kill();
    const before = await stream.all();

    // The devnet restarted from block 0 while the database kept the cursor at 200.
    const reset = await fresh(20);
    const txHash = await rpc<string>(reset.url, 'eth_sendTransaction', [
      { from: ALICE, to: BOB, value: '0x1' },
    ]);
    await rpc(reset.url, 'anvil_mine', ['0x2']);
    const head = await headOf(reset);
    expect(head).toBe(23);
    const indexer = await start(world, reset.url, 'resync');
    await waitUntil(async () => (await lastNumber(stream)) === head, 30_000, 'resync');

    const after = (await stream.all()).slice(before.length);
    expect(after[0]!.kind).toBe('removed');
    // Every block kept (the window and the history under it, HISTORY_BLOCKS): none of them is
    // on the node's chain.
    expect(before.length).toBeGreaterThan(WINDOW);
    expect(after[0]!.body.removed).toEqual(
      [...before].reverse().map((m) => ({ number: m.body.number, hash: m.body.hash })),
    );
    const genesis = await nodeHashes(reset.url, [0]);
    // One window below the node's head, here its genesis.
    expect(after[0]!.body.commonAncestor).toEqual({ number: 0, hash: genesis.get(0) });
    expect(after[0]!.body.newHead.number).toBe(head);
    const republished = after.slice(1);
    expect(republished.map((m) => m.body.number)).toEqual(
      Array.from({ length: head }, (_, i) => i + 1),
    );
    const node = await nodeHashes(
      reset.url,
      republished.map((m) => m.body.number),
    );
    expect(republished.map((m) => m.body.hash)).toEqual([...node.values()]);
    const withTx = republished.find((m) => m.body.number === 21)!;
    expect(withTx.body.transactions.map((t) => t.hash)).toEqual([txHash]);
    expect(withTx.body.receipts.map((r) => r.transactionHash)).toEqual([txHash]);

    expect(await metric(indexer, 'chain_indexer_deep_reorgs_total')).toBe(1);
    expect((await metric(indexer, 'chain_indexer_halted')) || 0).toBe(0);
    expect(await metric(indexer, 'chain_indexer_node_behind_blocks')).toBe(0);
    expect(indexer.lines.some((l) => l.msg === DEEP_LOG)).toBe(true);

    // And it follows the new chain from there.
    await rpc(reset.url, 'anvil_mine', ['0x1']);
    await waitUntil(async () => (await lastNumber(stream)) === head + 1, 20_000, 'next block');
  }, 180_000);

  // Below the window, the history (HISTORY_BLOCKS) still holds our block at the node's head:
  // the same hash is a lagging node on our chain, so resync waits as halt does instead of
  // retracting blocks the node has not reached yet.
  it('resync: a lagging node whose head is in the history waits, nothing removed', async () => {
    const { world, stream } = await open();
    const node = await startLaggingUpstream(old.url);
    try {
      const indexer = await start(world, node.url, 'resync');
      await waitUntil(async () => (await lastNumber(stream)) === 200, 60_000, 'initial backfill');
      const before = await stream.all();
      expect(before[0]!.body.number).toBe(90); // the history: 90 … 200; the window 104 … 200

      node.setHead(95);
      await waitUntil(
        () => indexer.lines.some((l) => l.msg === BEHIND_LOG),
        20_000,
        'the behind warning',
      );
      expect(indexer.lines.find((l) => l.msg === BEHIND_LOG)).toMatchObject({
        policy: 'resync',
        nodeHead: 95,
        cursor: 200,
      });
      node.setHead(undefined);
      await waitUntil(
        () => indexer.lines.some((l) => l.msg === 'node head back within the block window'),
        20_000,
        'the node back at the cursor',
      );
      expect(await stream.all()).toHaveLength(before.length);
      expect((await metric(indexer, 'chain_indexer_deep_reorgs_total')) || 0).toBe(0);
      await indexer.kill();
    } finally {
      await node.close();
    }
  }, 120_000);

  it('halt: waits without halting, shows the gap; a lagging node that catches up goes on', async () => {
    const { world, stream } = await open();
    const node = await startLaggingUpstream(old.url);
    try {
      const indexer = await start(world, node.url, 'halt');
      await waitUntil(async () => (await lastNumber(stream)) === 200, 60_000, 'initial backfill');
      const before = await stream.all();

      node.setHead(60); // a failover to a node 140 blocks behind: more than the window
      await waitUntil(
        async () => (await metric(indexer, 'chain_indexer_node_behind_blocks')) === 140,
        20_000,
        'behind gauge',
      );
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(await stream.all()).toHaveLength(before.length);
      expect((await metric(indexer, 'chain_indexer_halted')) || 0).toBe(0);
      expect((await metric(indexer, 'chain_indexer_deep_reorgs_total')) || 0).toBe(0);
      expect(await metric(indexer, 'chain_indexer_head_lag_blocks')).toBe(0);
      expect(await metric(indexer, 'chain_indexer_node_head')).toBe(60);
      expect(indexer.lines.filter((l) => l.msg === BEHIND_LOG)).toHaveLength(1); // once per episode
      expect(indexer.lines.find((l) => l.msg === BEHIND_LOG)).toMatchObject({
        network: 'eth-mainnet',
        nodeHead: 60,
        cursor: 200,
        behind: 140,
      });

      // The node catches up past the cursor, on the same chain: blocks go on from 201.
      node.setHead(undefined);
      await rpc(old.url, 'anvil_mine', ['0x3']);
      await waitUntil(async () => (await lastNumber(stream)) === 203, 20_000, 'caught up');
      const after = (await stream.all()).slice(before.length);
      expect(after.map((m) => [m.kind, m.body.number])).toEqual([
        ['block', 201],
        ['block', 202],
        ['block', 203],
      ]);
      expect(() => canonicalFrom([...before, ...after])).not.toThrow();
      expect(await metric(indexer, 'chain_indexer_node_behind_blocks')).toBe(0);
      expect(indexer.lines.some((l) => l.msg === 'node head back within the block window')).toBe(
        true,
      );
      await indexer.kill();
    } finally {
      await node.close();
    }

    // The devnet-reset case under halt: a fresh chain far below the cursor waits the same way;
    // once it passes the cursor its blocks do not extend ours: the deep reorg halt, as before.
    const before = await stream.all();
    const reset = await fresh(10);
    const indexer = await start(world, reset.url, 'halt');
    await waitUntil(
      async () => (await metric(indexer, 'chain_indexer_node_behind_blocks')) === 203 - 10,
      20_000,
      'behind gauge on the reset chain',
    );
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await stream.all()).toHaveLength(before.length);
    expect((await metric(indexer, 'chain_indexer_halted')) || 0).toBe(0);
    await rpc(reset.url, 'anvil_mine', ['0xc8']); // head 210, past the cursor
    await waitUntil(
      async () => (await metric(indexer, 'chain_indexer_halted')) === 1,
      20_000,
      'deep reorg halt',
    );
    // (It may halt on the way up, as soon as the head is back inside the window and its hash
    // differs; with the head past the cursor the gauge goes back to 0, still halted.)
    await waitUntil(
      async () => (await metric(indexer, 'chain_indexer_node_behind_blocks')) === 0,
      20_000,
      'behind gauge back to 0',
    );
    expect(await metric(indexer, 'chain_indexer_halted')).toBe(1);
    expect(await metric(indexer, 'chain_indexer_deep_reorgs_total')).toBe(1);
    expect(await stream.all()).toHaveLength(before.length);
  }, 240_000);
});

import { startAnvil, type AnvilInstance } from '@meridian/testing';
import {
  ChainStream,
  createWorld,
  nodeHashes,
  rpc,
  startIndexer,
  waitUntil,
  type IndexerProcess,
  type World,
} from './indexer-harness';

const WINDOW = 97;
const DEPTH = WINDOW + 3;
const ALICE = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const BOB = '0x70997970c51812dc3a635b855187f9447955c4f2';

/** A reorg deeper than the window: an alert and a halt, then the documented resync. */
describe('chain-indexer, reorg deeper than the window', () => {
  let anvil: AnvilInstance;
  let world: World;
  let stream: ChainStream;
  const processes: IndexerProcess[] = [];
  const env = (extra: Record<string, string>) => ({
    NETWORKS: 'eth-mainnet',
    UPSTREAMS: JSON.stringify({ 'eth-mainnet': [anvil.url] }),
    WINDOW_BLOCKS: String(WINDOW),
    START_BLOCKS_BEHIND: '110',
    BACKFILL_BLOCKS_PER_SECOND: '1000',
    ...extra,
  });
  const headNumber = async () => Number(await rpc<string>(anvil.url, 'eth_blockNumber'));
  const metric = async (indexer: IndexerProcess, name: string) => {
    const text = await (await fetch(`http://127.0.0.1:${indexer.port}/metrics`)).text();
    return Number(new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, 'm').exec(text)?.[1]);
  };

  beforeAll(async () => {
    anvil = await startAnvil({ chainId: 1 });
    world = await createWorld();
    stream = await ChainStream.open(world);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.kill('SIGKILL')));
    await stream?.close();
    await anvil?.stop();
    await world?.cleanup();
  });

  // QA MM F1: resync took the block under the window as the ancestor, so the new branch's
  // blocks between the fork and the window (a transfer in one of them) were never published,
  // and the orphaned blocks there never removed. The history under the window finds the fork.
  it('halts with an alert (metric + log) and publishes nothing; resync finds the real ancestor in the history, removes every orphaned block and publishes the whole new branch', async () => {
    await rpc(anvil.url, 'anvil_mine', ['0x78']); // 120 blocks
    const halting = await startIndexer(world, env({ DEEP_REORG_POLICY: 'halt' }));
    processes.push(halting);
    const head = await headNumber();
    await waitUntil(
      async () => (await stream.all()).slice(-1)[0]?.body.number === head,
      60_000,
      'initial backfill',
    );
    const before = await stream.all();

    // A transfer in the new branch's second block: below the window the indexer kept.
    await rpc(anvil.url, 'anvil_reorg', [DEPTH, [[{ from: ALICE, to: BOB, value: '0x2a' }, 1]]]);
    await rpc(anvil.url, 'anvil_mine', ['0x1']);
    await waitUntil(
      async () => (await metric(halting, 'chain_indexer_halted')) === 1,
      20_000,
      'halt',
    );
    expect(await metric(halting, 'chain_indexer_deep_reorgs_total')).toBe(1);
    expect(
      halting.lines.some(
        (l) =>
          l.msg ===
          'reorg deeper than the block window: no block of the window is on the node chain',
      ),
    ).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await stream.all()).toHaveLength(before.length); // nothing skipped over, nothing published
    await halting.kill();

    const resync = await startIndexer(world, env({ DEEP_REORG_POLICY: 'resync' }));
    processes.push(resync);
    const newHead = await headNumber();
    await waitUntil(
      async () => (await stream.all()).slice(-1)[0]?.body.number === newHead,
      30_000,
      'resync',
    );
    const fresh = (await stream.all()).slice(before.length);
    expect(fresh[0]!.kind).toBe('removed');
    const window = before.slice(-WINDOW);
    const orphaned = before.slice(-DEPTH);
    expect(orphaned[0]!.body.number).toBe(window[0]!.body.number - (DEPTH - WINDOW));
    expect(fresh[0]!.body.removed).toEqual(
      [...orphaned].reverse().map((m) => ({ number: m.body.number, hash: m.body.hash })),
    );
    const ancestor = fresh[0]!.body.commonAncestor.number;
    expect(ancestor).toBe(orphaned[0]!.body.number - 1);
    expect(fresh[0]!.body.commonAncestor.hash).toBe(
      (await nodeHashes(anvil.url, [ancestor])).get(ancestor),
    );
    const republished = fresh.slice(1);
    expect(republished.map((m) => m.body.number)).toEqual(
      Array.from({ length: newHead - ancestor }, (_, i) => ancestor + 1 + i),
    );
    const node = await nodeHashes(
      anvil.url,
      republished.map((m) => m.body.number),
    );
    expect(republished.map((m) => m.body.hash)).toEqual([...node.values()]);
    const transfer = republished.find((m) =>
      m.body.transactions.some((t) => t.from.toLowerCase() === ALICE && t.to === BOB),
    );
    expect(transfer?.body.number).toBe(ancestor + 2);
    expect(transfer!.body.number).toBeLessThan(window[0]!.body.number);
    expect(
      resync.lines.some((l) => l.msg === 'deep reorg: common ancestor found in the block history'),
    ).toBe(true);
  }, 180_000);
});

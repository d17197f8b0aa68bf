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
  type StreamMessage,
  type World,
} from './indexer-harness';

const ALICE = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const BOB = '0x70997970c51812dc3a635b855187f9447955c4f2';

/** One indexer process following an anvil devnet: order, receipts, reorgs of depth 1 and 3. */
describe('chain-indexer on anvil', () => {
  let anvil: AnvilInstance;
  let world: World;
  let indexer: IndexerProcess;
  let stream: ChainStream;

  const headNumber = async () => Number(await rpc<string>(anvil.url, 'eth_blockNumber'));
  const caughtUp = async () => {
    const head = await headNumber();
    const [last] = (await stream.all()).filter((m) => m.kind === 'block').slice(-1);
    return last?.body.number === head;
  };
  const send = (value: number, nonce?: number) =>
    rpc<string>(anvil.url, 'eth_sendTransaction', [
      {
        from: ALICE,
        to: BOB,
        value: `0x${value.toString(16)}`,
        ...(nonce === undefined ? {} : { nonce: `0x${nonce.toString(16)}` }),
      },
    ]);
  /** The node's chain equals the chain the messages describe, over every published height. */
  const expectStreamMatchesNode = async (messages: StreamMessage[]) => {
    const published = canonicalFrom(messages);
    const heights = [...published.keys()].sort((a, b) => a - b);
    expect(heights).toEqual(Array.from({ length: heights.length }, (_, i) => heights[0]! + i));
    expect(heights[heights.length - 1]).toBe(await headNumber());
    expect(published).toEqual(await nodeHashes(anvil.url, heights));
  };

  beforeAll(async () => {
    anvil = await startAnvil({ chainId: 1 });
    world = await createWorld();
    stream = await ChainStream.open(world);
    await rpc(anvil.url, 'anvil_mine', ['0x3']);
    indexer = await startIndexer(world, {
      NETWORKS: 'eth-mainnet',
      UPSTREAMS: JSON.stringify({ 'eth-mainnet': [anvil.url] }),
    });
    await waitUntil(caughtUp, 30_000, 'first block');
  }, 120_000);

  afterAll(async () => {
    await indexer?.kill();
    await stream?.close();
    await anvil?.stop();
    await world?.cleanup();
  });

  it('publishes new blocks in order, each once, with transactions and their receipts', async () => {
    const from = await headNumber();
    const before = (await stream.all()).length;
    await rpc(anvil.url, 'anvil_mine', ['0x2']);
    const txHash = await send(1_000);
    await rpc(anvil.url, 'anvil_mine', ['0x1']);
    await waitUntil(caughtUp, 20_000, 'new blocks');

    // Every block the node made since `from` (2 mined, the transaction's, 1 mined: anvil decides
    // whether the transaction gets a block of its own), each once, in order, nothing else.
    const to = await headNumber();
    expect(to - from).toBeGreaterThanOrEqual(3);
    const messages = await stream.all();
    const fresh = messages.slice(before);
    expect(fresh.map((m) => m.kind)).toEqual(Array.from({ length: to - from }, () => 'block'));
    const numbers = fresh.map((m) => m.body.number);
    expect(numbers).toEqual(Array.from({ length: to - from }, (_, i) => from + 1 + i));
    expect(new Set(messages.map((m) => m.msgId)).size).toBe(messages.length);
    for (const m of fresh) {
      expect(m.subject).toBe('chain.block.canonical.v1.eth-mainnet');
      expect(m.msgId).toBe(`eth-mainnet:${m.body.hash}:0`);
    }
    const withTx = fresh.find((m) => m.body.transactions.length > 0)!;
    expect(withTx.body.transactions.map((t) => t.hash)).toEqual([txHash]);
    expect(withTx.body.receipts).toEqual([
      expect.objectContaining({ transactionHash: txHash, status: '0x1' }),
    ]);
    await expectStreamMatchesNode(messages);
  });

  it('a reorg of depth 1: one removal of the old head, then the new block', async () => {
    const oldHead = (await stream.all()).filter((m) => m.kind === 'block').slice(-1)[0]!;
    const before = (await stream.all()).length;
    await rpc(anvil.url, 'anvil_reorg', [1, []]);
    const newHash = (await nodeHashes(anvil.url, [oldHead.body.number])).get(oldHead.body.number)!;
    expect(newHash).not.toBe(oldHead.body.hash);
    await waitUntil(
      async () => (await stream.all()).slice(before).some((m) => m.body.hash === newHash),
      20_000,
      'new branch',
    );

    const fresh = (await stream.all()).slice(before);
    expect(fresh[0]!.kind).toBe('removed');
    expect(fresh[0]!.subject).toBe('chain.block.removed.v1.eth-mainnet');
    expect(fresh[0]!.body.removed).toEqual([
      { number: oldHead.body.number, hash: oldHead.body.hash },
    ]);
    expect(fresh[0]!.body.commonAncestor.number).toBe(oldHead.body.number - 1);
    expect(fresh[1]).toMatchObject({
      kind: 'block',
      body: { number: oldHead.body.number, hash: newHash },
    });
    await expectStreamMatchesNode(await stream.all());
  });

  it('a reorg of depth 3 removes newest first and re-includes a transaction in the new branch', async () => {
    const nonce = Number(
      await rpc<string>(anvil.url, 'eth_getTransactionCount', [ALICE, 'latest']),
    );
    await send(7_777);
    await rpc(anvil.url, 'anvil_mine', ['0x2']);
    await waitUntil(caughtUp, 20_000, 'blocks before the reorg');
    const blocks = (await stream.all()).filter((m) => m.kind === 'block');
    const orphaned = blocks.slice(-3);
    expect(orphaned[0]!.body.transactions).toHaveLength(1);
    const before = (await stream.all()).length;

    // The same transfer (same sender and nonce) goes into the middle block of the new branch.
    await rpc(anvil.url, 'anvil_reorg', [
      3,
      [[{ from: ALICE, to: BOB, value: '0x1e61', nonce: `0x${nonce.toString(16)}` }, 1]],
    ]);
    const head = await headNumber();
    await waitUntil(
      async () => {
        const last = (await stream.all()).slice(-1)[0]!;
        return last.kind === 'block' && last.body.number === head && last.seq > before;
      },
      20_000,
      'new branch published',
    );

    const fresh = (await stream.all()).slice(before);
    expect(fresh[0]!.kind).toBe('removed');
    expect(fresh[0]!.body.removed).toEqual(
      [...orphaned].reverse().map((m) => ({ number: m.body.number, hash: m.body.hash })),
    );
    expect(fresh.slice(1).every((m) => m.kind === 'block')).toBe(true);
    const reincluded = fresh
      .slice(1)
      .flatMap((m) => m.body.transactions.map((t) => ({ block: m.body.number, tx: t })))
      .find(({ tx }) => tx.from.toLowerCase() === ALICE && Number(tx.nonce) === nonce);
    expect(reincluded?.block).toBe(orphaned[0]!.body.number + 1);
    // After a reorg the ids carry the generation: no collision with anything published before.
    const all = await stream.all();
    expect(new Set(all.map((m) => m.msgId)).size).toBe(all.length);
    await expectStreamMatchesNode(all);
  });

  it('exposes head lag and reorg metrics', async () => {
    const text = await (await fetch(`http://127.0.0.1:${indexer.port}/metrics`)).text();
    expect(text).toMatch(/chain_indexer_head_lag_blocks\{[^}]*network="eth-mainnet"[^}]*\} 0/);
    expect(text).toMatch(/chain_indexer_reorgs_total\{[^}]*network="eth-mainnet"[^}]*\} 2/);
    expect(text).toMatch(
      /chain_indexer_reorg_depth_blocks_sum\{[^}]*network="eth-mainnet"[^}]*\} 4/,
    );
    expect(text).toMatch(/chain_indexer_leader\{[^}]*network="eth-mainnet"[^}]*\} 1/);
  });
});

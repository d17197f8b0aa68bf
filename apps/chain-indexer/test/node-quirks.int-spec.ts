import { startAnvil, startCuttableTcpRelay, type AnvilInstance } from '@meridian/testing';
import {
  ChainStream,
  createWorld,
  rpc,
  startIndexer,
  waitUntil,
  type IndexerProcess,
  type World,
} from './indexer-harness';
import { startMissingMethodUpstream } from './missing-method-upstream';

const ALICE = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const BOB = '0x70997970c51812dc3a635b855187f9447955c4f2';

describe('chain-indexer against node quirks', () => {
  let anvil: AnvilInstance;
  let world: World;
  let stream: ChainStream;
  let indexer: IndexerProcess | undefined;

  const headNumber = async () => Number(await rpc<string>(anvil.url, 'eth_blockNumber'));
  const published = async (number: number) =>
    (await stream.all()).some((m) => m.kind === 'block' && m.body.number === number);

  beforeEach(async () => {
    anvil = await startAnvil({ chainId: 1 });
    world = await createWorld();
    stream = await ChainStream.open(world);
  }, 60_000);

  afterEach(async () => {
    await indexer?.kill('SIGKILL');
    await stream?.close();
    await anvil?.stop();
    await world?.cleanup();
  });

  it('a node without eth_getBlockReceipts: receipts fetched per transaction', async () => {
    const node = await startMissingMethodUpstream(anvil.url);
    try {
      indexer = await startIndexer(world, {
        NETWORKS: 'eth-mainnet',
        UPSTREAMS: JSON.stringify({ 'eth-mainnet': [{ http: node.url, ws: anvil.wsUrl }] }),
      });
      await waitUntil(async () => published(await headNumber()), 20_000, 'first block');
      // Automining: one block per transaction; mine them in one block instead.
      await rpc(anvil.url, 'evm_setAutomine', [false]);
      const hashes = [
        await rpc<string>(anvil.url, 'eth_sendTransaction', [
          { from: ALICE, to: BOB, value: '0x1' },
        ]),
        await rpc<string>(anvil.url, 'eth_sendTransaction', [
          { from: ALICE, to: BOB, value: '0x2' },
        ]),
      ];
      await rpc(anvil.url, 'anvil_mine', ['0x1']);
      const head = await headNumber();
      await waitUntil(() => published(head), 20_000, 'block with two transactions');

      const block = (await stream.all()).find((m) => m.kind === 'block' && m.body.number === head)!;
      expect(block.body.transactions.map((t) => t.hash)).toEqual(hashes);
      expect(block.body.receipts.map((r) => r.transactionHash)).toEqual(hashes);
      expect(node.calls.get('eth_getBlockReceipts')).toBe(1); // asked once, then remembered
      expect(node.calls.get('eth_getTransactionReceipt')).toBe(2);
      expect(
        indexer.lines.some(
          (l) => l.msg === 'node lacks eth_getBlockReceipts; receipts per transaction',
        ),
      ).toBe(true);
    } finally {
      await node.close();
    }
  }, 120_000);

  it('the newHeads socket drops: blocks keep coming by polling', async () => {
    const relay = await startCuttableTcpRelay(anvil.port);
    indexer = await startIndexer(world, {
      NETWORKS: 'eth-mainnet',
      UPSTREAMS: JSON.stringify({
        'eth-mainnet': [{ http: anvil.url, ws: `ws://127.0.0.1:${relay.port}` }],
      }),
      // While the socket is up only its notifications wake the follower (no safety poll in
      // this test's time), so a block published after the cut proves the polling fallback.
      SAFETY_POLL_MS: '600000',
      LEASE_TTL_MS: '1800000',
      POLL_INTERVAL_MS: '200',
      WS_RECONNECT_MS: '600000',
    });
    await waitUntil(
      () => indexer!.lines.some((l) => l.msg === 'newHeads subscribed'),
      20_000,
      'subscription',
    );
    await rpc(anvil.url, 'anvil_mine', ['0x1']);
    await waitUntil(async () => published(await headNumber()), 10_000, 'block over the socket');

    await relay.cut();
    await waitUntil(
      () => indexer!.lines.some((l) => l.msg === 'newHeads socket down; polling'),
      10_000,
      'socket drop noticed',
    );
    await rpc(anvil.url, 'anvil_mine', ['0x2']);
    const head = await headNumber();
    await waitUntil(() => published(head), 10_000, 'blocks by polling');
    const metrics = await (await fetch(`http://127.0.0.1:${indexer.port}/metrics`)).text();
    expect(metrics).toMatch(/chain_indexer_ws_connected\{[^}]*network="eth-mainnet"[^}]*\} 0/);
  }, 120_000);
});

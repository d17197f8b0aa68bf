import { logEmitterInitCode, startAnvil, type AnvilInstance } from '@meridian/testing';
import {
  ChainStream,
  createWorld,
  rpc,
  startIndexer,
  waitUntil,
  type IndexerProcess,
  type StreamMessage,
  type World,
} from './indexer-harness';

const ALICE = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const MIB = 1024 * 1024;

interface Log {
  logIndex: string;
  data: string;
  omitted?: { data: number };
  [key: string]: unknown;
}

/**
 * QA High: one transaction emitting 60 logs of 32 KiB stopped network P (block_item_too_large,
 * retried every second). Now its receipt travels as slices over several parts, a log too large
 * for a message goes without its data (marked `omitted`), and the indexer goes on.
 */
describe('chain-indexer on a transaction with more logs than a stream message holds', () => {
  let anvil: AnvilInstance;
  let world: World;
  let indexer: IndexerProcess;
  let stream: ChainStream;

  const headNumber = async () => Number(await rpc<string>(anvil.url, 'eth_blockNumber'));
  const blockMessages = async (number: number) =>
    (await stream.all()).filter((m) => m.kind === 'block' && m.body.number === number);
  const logsOf = (messages: StreamMessage[], txHash: string) =>
    messages.flatMap((m) =>
      (m.body.receipts as unknown as { transactionHash: string; logs: Log[] }[])
        .filter((r) => r.transactionHash === txHash)
        .flatMap((r) => r.logs),
    );
  /** Sends `data` as a contract creation, mines it, and returns its receipt as the node has it. */
  const emit = async (data: string) => {
    const hash = await rpc<string>(anvil.url, 'eth_sendTransaction', [
      { from: ALICE, data, gas: `0x${(16_000_000).toString(16)}` },
    ]);
    type Receipt = { status: string; blockNumber: string; logs: Log[] };
    let receipt: Receipt | null = null;
    await waitUntil(
      async () =>
        (receipt = await rpc<Receipt | null>(anvil.url, 'eth_getTransactionReceipt', [hash])) !==
        null,
      10_000,
      'the transaction mined',
    );
    receipt = receipt!;
    expect(receipt.status).toBe('0x1');
    return { hash, receipt, number: Number(receipt.blockNumber) };
  };

  beforeAll(async () => {
    anvil = await startAnvil({ chainId: 137 });
    world = await createWorld();
    stream = await ChainStream.open(world);
    indexer = await startIndexer(world, {
      NETWORKS: 'polygon-mainnet',
      UPSTREAMS: JSON.stringify({ 'polygon-mainnet': [anvil.url] }),
    });
    const head = await headNumber();
    await waitUntil(async () => (await blockMessages(head)).length > 0, 30_000, 'first block');
  }, 120_000);

  afterAll(async () => {
    await indexer?.kill();
    await stream?.close();
    await anvil?.stop();
    await world?.cleanup();
  });

  it('publishes 40 logs of 32 KiB (1.25 MiB) across parts, every log once in order, and goes on', async () => {
    const { hash, receipt, number } = await emit(logEmitterInitCode(40, 32 * 1024));
    expect(receipt.logs).toHaveLength(40);
    await rpc(anvil.url, 'anvil_mine', ['0x1']);
    await waitUntil(
      async () => (await blockMessages(number + 1)).length > 0,
      30_000,
      'the block after the large one',
    );

    const parts = await blockMessages(number);
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.map((m) => m.body.part)).toEqual(
      parts.map((_, index) => ({ index, count: parts.length })),
    );
    for (const m of parts)
      expect(Buffer.byteLength(JSON.stringify(m.body))).toBeLessThanOrEqual(MIB);
    expect(logsOf(parts, hash)).toEqual(receipt.logs);
    expect(parts.flatMap((m) => m.body.transactions.map((t) => t.hash))).toEqual([hash]);
    expect(indexer.lines.filter((l) => l['code'] === 'block_item_too_large')).toEqual([]);
  }, 90_000);

  it('publishes a log larger than a message without its data, marked omitted, and goes on', async () => {
    const bytes = MIB + 64 * 1024;
    const { hash, receipt, number } = await emit(logEmitterInitCode(1, bytes));
    await rpc(anvil.url, 'anvil_mine', ['0x1']);
    await waitUntil(
      async () => (await blockMessages(number + 1)).length > 0,
      30_000,
      'the block after the huge log',
    );

    const [log] = receipt.logs;
    expect(logsOf(await blockMessages(number), hash)).toEqual([
      { ...log, data: '0x', omitted: { data: bytes } },
    ]);
    expect(indexer.lines.filter((l) => l['code'] === 'block_item_too_large')).toEqual([]);
  }, 90_000);
});

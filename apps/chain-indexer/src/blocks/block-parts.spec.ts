import { ChainBlockSchema } from '@meridian/contracts';
import type { RawBlock, RawReceipt } from '../chain/node-client';
import { blockParts } from './block-parts';

const h = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
const addr = `0x${'ab'.repeat(20)}`;

function block(txCount: number, dataBytes: number): { block: RawBlock; receipts: RawReceipt[] } {
  const transactions = Array.from({ length: txCount }, (_, i) => ({
    hash: h(1000 + i),
    from: addr,
    to: addr,
    input: `0x${'00'.repeat(dataBytes)}`,
  }));
  return {
    block: { number: '0x10', hash: h(16), parentHash: h(15), timestamp: '0x64', transactions },
    receipts: transactions.map((t) => ({ transactionHash: t.hash, blockHash: h(16), logs: [] })),
  };
}

const options = {
  maxMessageBytes: 64 * 1024,
  generation: 0,
  publishedAt: '2026-01-01T00:00:00.000Z',
};

describe('blockParts', () => {
  it('one message when the block fits, id <network>:<hash>:0', () => {
    const { block: b, receipts } = block(3, 10);
    const parts = blockParts('eth-mainnet', b, receipts, options);
    expect(parts).toHaveLength(1);
    expect(parts[0]).toMatchObject({
      id: `eth-mainnet:${h(16)}:0`,
      number: 16,
      timestamp: 100,
      part: { index: 0, count: 1 },
    });
    expect(ChainBlockSchema.parse(parts[0])).toBeTruthy();
  });

  it('splits a large block into parts under the size, each tx beside its receipt, none lost', () => {
    const { block: b, receipts } = block(40, 4_000);
    const parts = blockParts('eth-mainnet', b, receipts, options);
    expect(parts.length).toBeGreaterThan(1);
    for (const [i, part] of parts.entries()) {
      expect(Buffer.byteLength(JSON.stringify(part))).toBeLessThanOrEqual(options.maxMessageBytes);
      expect(part.part).toEqual({ index: i, count: parts.length });
      expect(part.id).toBe(`eth-mainnet:${h(16)}:${i}`);
      expect(part.receipts.map((r) => r.transactionHash)).toEqual(
        part.transactions.map((t) => t.hash),
      );
    }
    expect(parts.flatMap((p) => p.transactions.map((t) => t.hash))).toEqual(
      b.transactions.map((t) => t.hash),
    );
  });

  it('after a reorg the generation is part of every id', () => {
    const { block: b, receipts } = block(1, 1);
    expect(blockParts('eth-mainnet', b, receipts, { ...options, generation: 3 })[0]!.id).toBe(
      `eth-mainnet:${h(16)}:0:g3`,
    );
  });

  it('a receipt larger than a part travels as slices: every log once, in order, each part fits', () => {
    // QA: one transaction emitting 60 logs of 32 KiB stopped network P (block_item_too_large).
    const { block: b, receipts } = block(3, 10);
    receipts[1] = {
      ...receipts[1]!,
      status: '0x1',
      logs: logs(b.transactions[1]!.hash, 40, 4_096),
    };
    const parts = blockParts('eth-mainnet', b, receipts, options);
    expect(parts.length).toBeGreaterThan(2);
    for (const part of parts) {
      expect(Buffer.byteLength(JSON.stringify(part))).toBeLessThanOrEqual(options.maxMessageBytes);
      expect(ChainBlockSchema.parse(part)).toBeTruthy();
    }
    const slices = parts.flatMap((p) => p.receipts).filter((r) => r.transactionHash === h(1001));
    expect(slices.length).toBeGreaterThan(1);
    for (const slice of slices) expect(slice).toMatchObject({ status: '0x1', blockHash: h(16) });
    expect(slices.flatMap((r) => r.logs)).toEqual(receipts[1]!.logs);
    // Every transaction once, in order, and the small receipts whole.
    expect(parts.flatMap((p) => p.transactions.map((t) => t.hash))).toEqual(
      b.transactions.map((t) => t.hash),
    );
    const all = parts.flatMap((p) => p.receipts);
    expect(all.filter((r) => r.transactionHash !== h(1001))).toEqual([receipts[0], receipts[2]]);
  });

  it('a log that alone exceeds a part goes without its data, marked omitted with its size', () => {
    const { block: b, receipts } = block(1, 10);
    const [small, huge, after] = logs(b.transactions[0]!.hash, 3, 100);
    const big = { ...huge!, data: `0x${'ab'.repeat(70_000)}` };
    receipts[0] = { ...receipts[0]!, logs: [small, big, after] };
    const parts = blockParts('eth-mainnet', b, receipts, options);
    for (const part of parts)
      expect(Buffer.byteLength(JSON.stringify(part))).toBeLessThanOrEqual(options.maxMessageBytes);
    const published = parts.flatMap((p) => p.receipts.flatMap((r) => r.logs));
    expect(published).toEqual([small, { ...big, data: '0x', omitted: { data: 70_000 } }, after]);
  });

  it('a transaction that alone exceeds a part goes without its input, marked omitted', () => {
    const { block: b, receipts } = block(2, 70_000);
    const parts = blockParts('eth-mainnet', b, receipts, options);
    const txs = parts.flatMap((p) => p.transactions);
    expect(txs).toEqual(
      b.transactions.map((t) => ({ ...t, input: '0x', omitted: { input: 70_000 } })),
    );
    expect(parts.flatMap((p) => p.receipts)).toEqual(receipts);
  });

  it('an item too large even without its bulk field is a non-retryable error, never a drop', () => {
    const { block: b, receipts } = block(1, 10);
    b.transactions[0] = { ...b.transactions[0]!, accessList: 'x'.repeat(70_000) };
    expect(() => blockParts('eth-mainnet', b, receipts, options)).toThrow(
      expect.objectContaining({ code: 'block_item_too_large', retryable: false }),
    );
  });
});

/** `count` logs of one transaction, `dataBytes` of data each, as the node returns them. */
function logs(txHash: string, count: number, dataBytes: number): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, i) => ({
    address: addr,
    topics: [h(7)],
    data: `0x${(i % 256).toString(16).padStart(2, '0').repeat(dataBytes)}`,
    blockHash: h(16),
    blockNumber: '0x10',
    logIndex: `0x${i.toString(16)}`,
    transactionHash: txHash,
    transactionIndex: '0x1',
    removed: false,
  }));
}

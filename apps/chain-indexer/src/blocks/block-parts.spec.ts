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

  it('a transaction larger than a message is a non-retryable error, never a silent drop', () => {
    const { block: b, receipts } = block(1, 70_000);
    expect(() => blockParts('eth-mainnet', b, receipts, options)).toThrow(
      expect.objectContaining({ code: 'block_item_too_large', retryable: false }),
    );
  });
});

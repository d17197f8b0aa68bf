import { chainBlockId, type ChainBlock } from '@meridian/contracts';
import { DomainError } from '@meridian/errors';
import type { RawBlock, RawReceipt } from '../chain/node-client';

/** Room left under the stream's max message size for headers and the envelope's own fields. */
const ENVELOPE_RESERVE = 8 * 1024;

interface Item {
  tx?: RawBlock['transactions'][number];
  receipt?: RawReceipt;
  bytes: number;
}

/**
 * The CHAIN messages of one block: one when it fits under `maxMessageBytes`, else parts with the
 * same header and disjoint transactions/receipts. A transaction and its receipt stay in one
 * part whenever the pair fits, so a matcher sees both together. Pure.
 */
export function blockParts(
  network: string,
  block: RawBlock,
  receipts: readonly RawReceipt[],
  options: { maxMessageBytes: number; generation: number; publishedAt: string },
): ChainBlock[] {
  const budget = options.maxMessageBytes - ENVELOPE_RESERVE;
  const items: Item[] = [];
  block.transactions.forEach((tx, index) => {
    const receipt = receipts[index];
    const txBytes = jsonBytes(tx) + 1;
    const receiptBytes = receipt ? jsonBytes(receipt) + 1 : 0;
    if (txBytes + receiptBytes <= budget)
      items.push({ tx, receipt, bytes: txBytes + receiptBytes });
    else {
      items.push({ tx, bytes: txBytes });
      if (receipt) items.push({ receipt, bytes: receiptBytes });
    }
  });
  for (const item of items) {
    if (item.bytes > budget) {
      throw new DomainError(
        'block_item_too_large',
        'internal',
        `${network}: a transaction or receipt of block ${block.hash} exceeds the stream's message size`,
        { retryable: false, details: { bytes: item.bytes, budget } },
      );
    }
  }
  const groups: Item[][] = [[]];
  let used = 0;
  for (const item of items) {
    if (used + item.bytes > budget && groups[groups.length - 1]!.length > 0) {
      groups.push([]);
      used = 0;
    }
    groups[groups.length - 1]!.push(item);
    used += item.bytes;
  }
  return groups.map((group, index) => ({
    id: chainBlockId(network, block.hash, index, options.generation),
    network,
    number: Number(block.number),
    hash: block.hash,
    parentHash: block.parentHash,
    timestamp: Number(block.timestamp),
    transactions: group.flatMap((i) => (i.tx ? [i.tx] : [])) as ChainBlock['transactions'],
    receipts: group.flatMap((i) => (i.receipt ? [i.receipt] : [])) as ChainBlock['receipts'],
    part: { index, count: groups.length },
    publishedAt: options.publishedAt,
  }));
}

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value));
}

import { chainBlockId, type ChainBlock } from '@meridian/contracts';
import { DomainError } from '@meridian/errors';
import type { RawBlock, RawReceipt } from '../chain/node-client';

/** Room left under the stream's max message size for headers and the envelope's own fields. */
const ENVELOPE_RESERVE = 8 * 1024;

type RawTx = RawBlock['transactions'][number];

interface Item {
  tx?: RawTx;
  /** The whole receipt, or a slice of it (every field, a contiguous run of its logs). */
  receipt?: RawReceipt;
  bytes: number;
}

/**
 * The CHAIN messages of one block: one when it fits under `maxMessageBytes`, else parts with the
 * same header. Pure. Every transaction and every log of the block is in exactly one part, in
 * block order (README "Blocks on the stream"):
 *
 * - a transaction and its receipt stay in one part whenever the pair fits, so a matcher sees
 *   both together;
 * - a receipt larger than a part travels as slices: copies with every field but `logs`, each
 *   holding a contiguous run of its logs (consumers read a receipt only for its logs);
 * - a log or transaction that alone exceeds a part goes without its bulk field (`data`, `input`),
 *   emptied to `0x` and named in `omitted` with its size in bytes (`omitted: {data: 524288}`):
 *   the receiver fetches the full object by hash from node access;
 * - only what still does not fit after that is a non-retryable `block_item_too_large`.
 */
export function blockParts(
  network: string,
  block: RawBlock,
  receipts: readonly RawReceipt[],
  options: { maxMessageBytes: number; generation: number; publishedAt: string },
): ChainBlock[] {
  const budget = options.maxMessageBytes - ENVELOPE_RESERVE;
  const tooLarge = (what: string, bytes: number) =>
    new DomainError(
      'block_item_too_large',
      'internal',
      `${network}: ${what} of block ${block.hash} exceeds the stream's message size`,
      { retryable: false, details: { bytes, budget } },
    );
  const items: Item[] = [];
  block.transactions.forEach((original, index) => {
    const { value: tx, bytes: txBytes } = fitted(original, 'input', 0, budget);
    if (txBytes > budget) throw tooLarge(`transaction ${original.hash}`, txBytes);
    const receipt = receipts[index];
    const receiptBytes = receipt ? jsonBytes(receipt) + 1 : 0;
    if (txBytes + receiptBytes <= budget)
      items.push({ tx, receipt, bytes: txBytes + receiptBytes });
    else {
      items.push({ tx, bytes: txBytes });
      if (!receipt) return;
      if (receiptBytes <= budget) items.push({ receipt, bytes: receiptBytes });
      else items.push(...receiptSlices(receipt, budget, tooLarge));
    }
  });
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

/**
 * A receipt too large for one part as slices that each fit: the receipt's other fields with a
 * contiguous run of its logs, every log in one slice, in order.
 */
function receiptSlices(
  receipt: RawReceipt,
  budget: number,
  tooLarge: (what: string, bytes: number) => Error,
): Item[] {
  const empty = { ...receipt, logs: [] };
  // The slice without logs, plus one byte per log for the comma between logs.
  const baseBytes = jsonBytes(empty) + 1;
  const slices: Item[] = [];
  let logs: unknown[] = [];
  let bytes = baseBytes;
  for (const original of receipt.logs) {
    const { value: log, bytes: logBytes } = fitted(
      original as Record<string, unknown>,
      'data',
      baseBytes,
      budget,
    );
    if (baseBytes + logBytes > budget) {
      const where = (original as { logIndex?: unknown }).logIndex;
      throw tooLarge(`log ${String(where)} of ${receipt.transactionHash}`, baseBytes + logBytes);
    }
    if (bytes + logBytes > budget && logs.length > 0) {
      slices.push({ receipt: { ...empty, logs }, bytes });
      logs = [];
      bytes = baseBytes;
    }
    logs.push(log);
    bytes += logBytes;
  }
  if (logs.length > 0 || slices.length === 0) slices.push({ receipt: { ...empty, logs }, bytes });
  return slices;
}

/**
 * `value` as published, with its size in a part (its JSON and a separating comma): whole when
 * it fits in a part beside `overhead` bytes, else without its bulk hex field (emptied to `0x`,
 * which the contract's schemas accept) and with `omitted: {<field>: <bytes>}` saying what went
 * and how big it was. Each value is serialised once unless it is trimmed.
 */
function fitted<T extends Record<string, unknown>>(
  value: T,
  field: 'input' | 'data',
  overhead: number,
  budget: number,
): { value: T; bytes: number } {
  const bytes = jsonBytes(value) + 1;
  const bulk = value[field];
  if (typeof bulk !== 'string' || overhead + bytes <= budget) return { value, bytes };
  const omittedBytes = Math.floor(Math.max(0, bulk.length - 2) / 2);
  const previous = (value['omitted'] as Record<string, unknown> | undefined) ?? {};
  const trimmed = { ...value, [field]: '0x', omitted: { ...previous, [field]: omittedBytes } };
  return { value: trimmed, bytes: jsonBytes(trimmed) + 1 };
}

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value));
}

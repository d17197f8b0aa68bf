import { z } from 'zod';
import {
  address,
  blockNumber,
  hash32,
  hexData,
  hexQuantity,
  idempotencyId,
  isoTimestamp,
  networkKey,
} from './common.schema';

/**
 * A log as the node returned it (unknown keys kept: it is forwarded as `raw`). A log too large
 * for a message alone comes with `data` emptied to `0x` and `omitted: {data: <bytes>}`
 * (chain-indexer README, "Blocks on the stream").
 */
export const ChainLogSchema = z.looseObject({
  address,
  topics: z.array(hash32).max(4),
  data: hexData,
  logIndex: hexQuantity,
  transactionHash: hash32,
  transactionIndex: hexQuantity,
});

/**
 * A transaction as the node returned it (unknown keys kept: it is forwarded as `raw`); likewise
 * `input` emptied and `omitted: {input: <bytes>}` when it alone exceeds a message.
 */
export const ChainTransactionSchema = z.looseObject({
  hash: hash32,
  from: address,
  to: address.nullable(),
});

/**
 * A receipt as the node returned it; `logs` are what log-event webhooks match. A receipt larger
 * than a message travels as slices (every field but `logs`, each with a contiguous run of them),
 * possibly in different parts, so consumers pair nothing by position.
 */
export const ChainReceiptSchema = z.looseObject({
  transactionHash: hash32,
  logs: z.array(ChainLogSchema),
});

export const BlockRefSchema = z.object({ number: blockNumber, hash: hash32 });

/**
 * `chain.block.canonical.v1.<network>`: a block that became part of the canonical chain, with
 * its transactions and receipts. A block larger than the stream's max message size is split
 * into parts (same header, disjoint transactions/receipts or receipt slices); `part` says which.
 * id = `<network>:<hash>:<part index>`, with `:g<generation>` appended once the indexer has
 * handled a reorganisation of this network (see chainBlockId).
 */
export const ChainBlockSchema = z.object({
  id: idempotencyId,
  network: networkKey,
  number: blockNumber,
  hash: hash32,
  parentHash: hash32,
  /** Block timestamp, unix seconds. */
  timestamp: z.number().int().nonnegative(),
  transactions: z.array(ChainTransactionSchema),
  receipts: z.array(ChainReceiptSchema),
  part: z
    .object({ index: z.number().int().nonnegative(), count: z.number().int().positive() })
    .refine((p) => p.index < p.count, 'part.index must be < part.count'),
  publishedAt: isoTimestamp,
});
export type ChainBlock = z.infer<typeof ChainBlockSchema>;

/**
 * `generation` counts the reorganisations the indexer has handled on this network. A block can
 * become canonical again after it was removed (the chain flips back to a branch it had left);
 * its second publication must not share the first one's id, or the stream's duplicate window
 * would drop it. 0 (no reorg yet) keeps the plain form.
 */
export function chainBlockId(network: string, hash: string, partIndex = 0, generation = 0): string {
  const base = `${network}:${hash.toLowerCase()}:${partIndex}`;
  return generation > 0 ? `${base}:g${generation}` : base;
}

/**
 * `chain.block.removed.v1.<network>`: blocks dropped by a reorganisation, newest first, down
 * to (excluding) the common ancestor. Published before the blocks of the new branch.
 * id = `<network>:reorg:<newHead.hash>`, `:g<generation>` appended (see chainRemovedId).
 */
export const ChainBlocksRemovedSchema = z.object({
  id: idempotencyId,
  network: networkKey,
  removed: z.array(BlockRefSchema).min(1),
  commonAncestor: BlockRefSchema,
  newHead: BlockRefSchema,
  detectedAt: isoTimestamp,
});
export type ChainBlocksRemoved = z.infer<typeof ChainBlocksRemovedSchema>;

/** `generation`: as for chainBlockId (the count before this reorganisation). */
export function chainRemovedId(network: string, newHeadHash: string, generation = 0): string {
  const base = `${network}:reorg:${newHeadHash.toLowerCase()}`;
  return generation > 0 ? `${base}:g${generation}` : base;
}

/** Value of a chain-indexer leader lease (KvBuckets.indexerLeases, key = network key). */
export const IndexerLeaseSchema = z.object({
  holder: z.string().min(1).max(200),
  acquiredAt: isoTimestamp,
  renewedAt: isoTimestamp,
});
export type IndexerLease = z.infer<typeof IndexerLeaseSchema>;

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

/** A log as the node returned it (unknown keys kept: it is forwarded as `raw`). */
export const ChainLogSchema = z.looseObject({
  address,
  topics: z.array(hash32).max(4),
  data: hexData,
  logIndex: hexQuantity,
  transactionHash: hash32,
  transactionIndex: hexQuantity,
});

/** A transaction as the node returned it (unknown keys kept: it is forwarded as `raw`). */
export const ChainTransactionSchema = z.looseObject({
  hash: hash32,
  from: address,
  to: address.nullable(),
});

/** A receipt as the node returned it; `logs` are what log-event webhooks match. */
export const ChainReceiptSchema = z.looseObject({
  transactionHash: hash32,
  logs: z.array(ChainLogSchema),
});

export const BlockRefSchema = z.object({ number: blockNumber, hash: hash32 });

/**
 * `chain.block.canonical.v1.<network>`: a block that became part of the canonical chain, with
 * its transactions and receipts. A block larger than the stream's max message size is split
 * into parts (same header, disjoint transactions/receipts); `part` says which.
 * id = `<network>:<hash>:<part index>` (see chainBlockId).
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

export function chainBlockId(network: string, hash: string, partIndex = 0): string {
  return `${network}:${hash.toLowerCase()}:${partIndex}`;
}

/**
 * `chain.block.removed.v1.<network>`: blocks dropped by a reorganisation, newest first, down
 * to (excluding) the common ancestor. Published before the blocks of the new branch.
 * id = `<network>:reorg:<newHead.hash>` (see chainRemovedId).
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

export function chainRemovedId(network: string, newHeadHash: string): string {
  return `${network}:reorg:${newHeadHash.toLowerCase()}`;
}

import { createHash } from 'node:crypto';

/**
 * What one event is about: a transaction, or one log of it, in one block. The block hash is part
 * of the identity: the unconfirmed, confirmed and removed deliveries of an event share its id,
 * while a transaction re-included in another block after a reorg is a new event with a new id
 * (receivers de-duplicate on eventId + phase, so the re-inclusion must not look like a repeat).
 */
export interface EventKey {
  readonly network: string;
  readonly blockHash: string;
  readonly txHash: string;
  /** Index of the log in the block, or null for the transaction itself. */
  readonly logIndex: number | null;
  /**
   * How many times this block had been removed by a reorg before it became canonical again
   * (0 the first time). A block the chain leaves and returns to is a new occurrence of its
   * events: a new eventId, so receivers that de-duplicate on eventId + phase take its
   * unconfirmed and confirmed deliveries after the `removed` of the earlier one (ADR 0421).
   */
  readonly occurrence?: number;
}

/** `ev_` + 32 hex characters (128 bits of SHA-256): stable, opaque, a valid subject token. */
export function eventIdOf(key: EventKey): string {
  const occurrence = key.occurrence ?? 0;
  const digest = createHash('sha256')
    .update(
      `${key.network}|${key.blockHash.toLowerCase()}|${key.txHash.toLowerCase()}|${
        key.logIndex === null ? 'tx' : key.logIndex
      }${occurrence === 0 ? '' : `|o${occurrence}`}`,
    )
    .digest('hex');
  return `ev_${digest.slice(0, 32)}`;
}

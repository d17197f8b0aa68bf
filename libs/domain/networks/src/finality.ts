import type { NetworkKey } from './network.types';

/**
 * How deep a reorg the product still treats as possible, per network, in blocks below the head:
 * the one definition of finality every app uses.
 * - chain-indexer keeps this many recent block hashes and retracts a reorg within it (removals,
 *   the webhooks' `removed`); a deeper one is its deep-reorg alert (README "Deep reorgs");
 * - webhooks' `confirm_depth` (at most 96) stays below it, so a confirmed event can still be
 *   retracted by the indexer (`@meridian/webhooks` checks this against the table);
 * - rpc-gateway caches an answer by block number or transaction hash only for a block deeper
 *   than it (`finalizedHeight`): an answer the indexer could still retract is never final.
 * P has seen reorgs deeper than 64 blocks in practice, so it gets twice the others' window.
 * S has no reorgs: a certified checkpoint is final.
 */
export const REORG_WINDOW_BLOCKS: Readonly<Record<NetworkKey, number>> = Object.freeze({
  'opbnb-mainnet': 128,
  'opbnb-testnet': 128,
  'polygon-mainnet': 256,
  'polygon-amoy': 256,
  'eth-mainnet': 128,
  'eth-sepolia': 128,
  'eth-hoodi': 128,
  'sui-mainnet': 0,
});

/** Blocks below the head within which `network` may still reorganise (`REORG_WINDOW_BLOCKS`). */
export function reorgWindowBlocks(network: NetworkKey): number {
  return REORG_WINDOW_BLOCKS[network];
}

/**
 * The highest block of `network` the product treats as final when its head is `head`: below the
 * reorg window. Undefined while the head is unknown (nothing is final then), and below 0 on a
 * chain shorter than its window (no block is final yet).
 */
export function finalizedHeight(network: NetworkKey, head: number | undefined): number | undefined {
  return head === undefined ? undefined : head - REORG_WINDOW_BLOCKS[network];
}

/**
 * Which answers never change and may be cached (ARCHITECTURE "Performance shape"); "finalized"
 * is below the network's reorg window under the pool's head (`finalizedHeight` of
 * @meridian/networks: 128 blocks, 256 on P), the window within which chain-indexer still
 * retracts a reorg, so nothing the webhooks could still call `removed` is held final here:
 * - looked up by block hash (`BY_HASH`, `eth_getBlockReceipts` by hash), only when found (null
 *   may mean "not yet"): a block hash names one block, its header, transactions and receipts
 *   included, forever. A reorg makes another block canonical at that height, under another
 *   hash; the orphaned block's answer stays true of its hash, so it needs no finality;
 * - looked up by transaction hash (`BY_TX_HASH`), only once the block it was mined in is
 *   finalized (`isCacheableResult`): a transaction hash names the transaction, not where it was
 *   mined, and a reorg re-mines it in another block or drops it back to the pool (QA: a receipt
 *   served from the cache after `anvil_reorg` named the orphaned block);
 * - looked up by block number at or below the finalized height.
 * Nothing that depends on `latest`, `pending`, `safe` or an unknown tag is cached, and no null
 * (nothing negative: a "not found" may be found a block later).
 * `cacheKeyOf`: the cache key when the call may be served from / stored in the cache.
 */
const BY_HASH = new Set([
  'eth_getBlockByHash',
  'eth_getBlockTransactionCountByHash',
  'eth_getTransactionByBlockHashAndIndex',
  'eth_getUncleCountByBlockHash',
  'eth_getUncleByBlockHashAndIndex',
]);
const BY_TX_HASH = new Set(['eth_getTransactionByHash', 'eth_getTransactionReceipt']);
const BY_NUMBER = new Set([
  'eth_getBlockByNumber',
  'eth_getBlockTransactionCountByNumber',
  'eth_getTransactionByBlockNumberAndIndex',
  'eth_getUncleCountByBlockNumber',
  'eth_getUncleByBlockNumberAndIndex',
]);
const HASH32 = /^0x[0-9a-fA-F]{64}$/;
const QUANTITY = /^0x[0-9a-fA-F]+$/;

export function cacheKeyOf(
  network: string,
  method: string,
  params: readonly unknown[],
  finalizedHeight: number | undefined,
): string | undefined {
  const first = params[0];
  if (BY_HASH.has(method) || BY_TX_HASH.has(method)) {
    if (typeof first !== 'string' || !HASH32.test(first)) return undefined;
  } else if (BY_NUMBER.has(method)) {
    if (typeof first !== 'string' || !QUANTITY.test(first) || finalizedHeight === undefined)
      return undefined;
    if (Number.parseInt(first, 16) > finalizedHeight) return undefined;
  } else if (method === 'eth_getBlockReceipts') {
    if (typeof first !== 'string') return undefined;
    if (!HASH32.test(first)) {
      if (
        !QUANTITY.test(first) ||
        finalizedHeight === undefined ||
        Number.parseInt(first, 16) > finalizedHeight
      )
        return undefined;
    }
  } else {
    return undefined;
  }
  return `${network}|${method}|${JSON.stringify(params).toLowerCase()}`;
}

/**
 * Whether the answer to a call `cacheKeyOf` gave a key may be stored: a found answer only
 * (null means "not (yet) known" and must be asked again), and the answer to a transaction hash
 * only when its block (`blockNumber`) is at or below `finalizedHeight`, the height the number
 * lookups are held to (unknown: not stored). A pending transaction has no block yet.
 */
export function isCacheableResult(
  method: string,
  result: unknown,
  finalizedHeight: number | undefined,
): boolean {
  if (result === null || result === undefined) return false;
  if (BY_TX_HASH.has(method)) {
    if (typeof result !== 'object' || finalizedHeight === undefined) return false;
    const block = (result as { blockNumber?: unknown }).blockNumber;
    return (
      typeof block === 'string' &&
      QUANTITY.test(block) &&
      Number.parseInt(block, 16) <= finalizedHeight
    );
  }
  return true;
}

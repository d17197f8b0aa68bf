/**
 * Which answers never change and may be cached (ARCHITECTURE "Performance shape"):
 * - looked up by block hash or transaction hash (a hash names one immutable object), only when
 *   found (null may mean "not yet");
 * - looked up by block number at or below the finalized height.
 * Nothing that depends on `latest`, `pending`, `safe` or an unknown tag is cached.
 * Returns the cache key when the call may be served from / stored in the cache.
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

/** A found answer only: null/empty means "not (yet) known" and must be asked again. */
export function isCacheableResult(method: string, result: unknown): boolean {
  if (result === null || result === undefined) return false;
  // A pending transaction has no block yet; its later answer differs.
  if (method === 'eth_getTransactionByHash')
    return typeof (result as { blockHash?: unknown }).blockHash === 'string';
  return true;
}

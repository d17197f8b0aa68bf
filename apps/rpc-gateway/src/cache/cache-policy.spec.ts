import { cacheKeyOf, isCacheableResult } from './cache-policy';
import { LruCache } from './lru-cache';

const HASH = `0x${'ab'.repeat(32)}`;

describe('cacheKeyOf', () => {
  it.each([
    ['eth_getBlockByHash', [HASH, false], 100, true],
    ['eth_getTransactionReceipt', [HASH], undefined, true],
    ['eth_getBlockByNumber', ['0x64', false], 100, true],
    ['eth_getBlockByNumber', ['0x65', false], 100, false],
    ['eth_getBlockByNumber', ['latest', false], 100, false],
    ['eth_getBlockByNumber', ['0x1', false], undefined, false],
    ['eth_getBlockReceipts', [HASH], undefined, true],
    ['eth_getBlockReceipts', ['finalized'], 100, false],
    ['eth_blockNumber', [], 100, false],
    ['eth_getBalance', ['0x00', 'latest'], 100, false],
    ['eth_getBlockByHash', ['0x12', false], 100, false],
  ])('%s %j (finalized %s) cacheable=%s', (method, params, finalized, cacheable) => {
    expect(cacheKeyOf('eth-mainnet', method, params, finalized) !== undefined).toBe(cacheable);
  });

  it.each([
    // A pending transaction: no block yet.
    ['eth_getTransactionByHash', { blockHash: null, blockNumber: null }, 100, false],
    ['eth_getTransactionByHash', { blockHash: HASH, blockNumber: '0x64' }, 100, true],
    // Mined, but above the finalized height: a reorg may re-mine it elsewhere or drop it (QA).
    ['eth_getTransactionByHash', { blockHash: HASH, blockNumber: '0x65' }, 100, false],
    ['eth_getTransactionReceipt', { blockHash: HASH, blockNumber: '0x64' }, 100, true],
    ['eth_getTransactionReceipt', { blockHash: HASH, blockNumber: '0x65' }, 100, false],
    // The head is not known: nothing is final.
    ['eth_getTransactionReceipt', { blockHash: HASH, blockNumber: '0x1' }, undefined, false],
    ['eth_getTransactionReceipt', { blockHash: HASH }, 100, false],
    ['eth_getTransactionReceipt', '0x1', 100, false],
    ['eth_getTransactionReceipt', null, 100, false],
    // A block by hash is the same block forever, finalized or not.
    ['eth_getBlockByHash', null, 100, false],
    ['eth_getBlockByHash', { number: '0x1' }, undefined, true],
    ['eth_getBlockByHash', { number: '0x65' }, 100, true],
    ['eth_getBlockReceipts', [{ blockNumber: '0x65' }], 100, true],
  ])('isCacheableResult(%s, %j, finalized %s) = %s', (method, result, finalized, expected) =>
    expect(isCacheableResult(method, result, finalized)).toBe(expected),
  );
});

describe('LruCache', () => {
  it('evicts the least recently used entry', () => {
    const cache = new LruCache<string>(2);
    cache.set('a', '1');
    cache.set('b', '2');
    cache.get('a');
    cache.set('c', '3');
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual(['1', undefined, '3']);
  });
});

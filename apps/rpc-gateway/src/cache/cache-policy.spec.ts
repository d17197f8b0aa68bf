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
    ['eth_getTransactionByHash', { blockHash: null }, false],
    ['eth_getTransactionByHash', { blockHash: HASH }, true],
    ['eth_getBlockByHash', null, false],
    ['eth_getBlockByHash', { number: '0x1' }, true],
  ])('isCacheableResult(%s, %j) = %s', (method, result, expected) =>
    expect(isCacheableResult(method, result)).toBe(expected),
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

import { BalanceCache } from './balance-cache';
import { balanceRow } from '../testing/fixtures';

const row = (accountId: string, version: number, allowance = 1_000) =>
  balanceRow({ accountId, version, allowance, name: accountId });

describe('BalanceCache (ADR 0106)', () => {
  it('answers a row only at the version it was committed at', () => {
    const cache = new BalanceCache(10);
    cache.remember([row('a', 3, 700)]);
    expect(cache.take('a', 3)).toEqual(row('a', 3, 700));
    expect(cache.take('a', 4)).toBeUndefined(); // another process committed version 4
    expect(cache.take('b', 1)).toBeUndefined();
    expect([cache.hits, cache.misses]).toEqual([1, 2]);
  });

  it('hands out copies: a caller changing its row does not change the cache', () => {
    const cache = new BalanceCache(10);
    cache.remember([row('a', 1, 500)]);
    const taken = cache.take('a', 1)!;
    taken.allowance = 1;
    taken.version = 2;
    expect(cache.take('a', 1)).toEqual(row('a', 1, 500));
  });

  it('never replaces a newer version with an older one', () => {
    const cache = new BalanceCache(10);
    cache.remember([row('a', 5, 300)]);
    cache.remember([row('a', 4, 400)]);
    expect(cache.take('a', 5)?.allowance).toBe(300);
    cache.remember([row('a', 6, 200)]);
    expect(cache.take('a', 6)?.allowance).toBe(200);
  });

  it('drops the least recently used accounts beyond its capacity', () => {
    const cache = new BalanceCache(3);
    cache.remember([row('a', 1), row('b', 1), row('c', 1)]);
    expect(cache.take('a', 1)).toBeDefined(); // a is now the most recent
    cache.remember([row('d', 1), row('e', 1)]);
    expect(cache.size).toBe(3);
    expect(cache.take('b', 1)).toBeUndefined();
    expect(cache.take('c', 1)).toBeUndefined();
    expect(cache.take('a', 1)).toBeDefined();
    expect(cache.take('d', 1)).toBeDefined();
    expect(cache.take('e', 1)).toBeDefined();
  });

  it('keeps nothing at capacity 0', () => {
    const cache = new BalanceCache(0);
    cache.remember([row('a', 1)]);
    expect(cache.size).toBe(0);
    expect(cache.take('a', 1)).toBeUndefined();
  });
});

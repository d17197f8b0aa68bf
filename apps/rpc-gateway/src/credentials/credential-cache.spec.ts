import { FakeClock } from '@meridian/time';
import { AccountStates, CredentialCache, sha256Hex } from './credential-cache';

const token = { tokenId: 't1', accountId: 'a1', network: 'eth-mainnet' as const };

describe('CredentialCache', () => {
  const setup = () => {
    const clock = new FakeClock();
    const cache = new CredentialCache(() => clock.now().getTime(), {
      positiveTtlMs: 60_000,
      negativeTtlMs: 5_000,
      staleIfErrorMs: 3_600_000,
      maxEntries: 2,
    });
    return { clock, cache };
  };

  it('caches positive and negative answers for their own durations', () => {
    const { clock, cache } = setup();
    cache.put('good', token);
    cache.put('bad', null);
    expect(cache.get('good')).toEqual(token);
    expect(cache.get('bad')).toBeNull();
    clock.advance(5_000);
    expect(cache.get('bad')).toBeUndefined();
    expect(cache.get('good')).toEqual(token);
    clock.advance(55_000);
    expect(cache.get('good')).toBeUndefined();
  });

  it('keeps a known token past its freshness for stale-if-error, never an unknown one', () => {
    const { clock, cache } = setup();
    cache.put('good', token);
    cache.put('bad', null);
    clock.advance(60_000);
    expect(cache.kept('good')).toEqual(token);
    expect(cache.get('good')).toBeUndefined();
    expect(cache.kept('bad')).toBeUndefined();
    clock.advance(3_600_000 - 1);
    expect(cache.kept('good')).toEqual(token);
    clock.advance(1);
    expect(cache.kept('good')).toBeUndefined();
  });

  it('holds a kept token as fresh for a retry interval, never past its keeping', () => {
    const { clock, cache } = setup();
    cache.put('good', token);
    expect(cache.hold('good', 5_000)).toBe(true); // a fresh entry keeps its own freshness
    clock.advance(59_999);
    expect(cache.get('good')).toEqual(token);
    clock.advance(1);
    expect(cache.hold('good', 5_000)).toBe(true);
    expect(cache.get('good')).toEqual(token);
    clock.advance(5_000);
    expect(cache.kept('good')).toEqual(token);
    clock.advance(3_600_000 - 5_000 - 1_000);
    expect(cache.hold('good', 5_000)).toBe(true);
    clock.advance(1_000);
    expect(cache.kept('good')).toBeUndefined();
    expect(cache.hold('good', 5_000)).toBe(false);
    expect(cache.hold('never-seen', 5_000)).toBe(false);
  });

  it('with stale-if-error off, a token past its freshness is gone', () => {
    const clock = new FakeClock();
    const cache = new CredentialCache(() => clock.now().getTime(), {
      positiveTtlMs: 60_000,
      negativeTtlMs: 5_000,
      staleIfErrorMs: 0,
      maxEntries: 2,
    });
    cache.put('good', token);
    clock.advance(60_000);
    expect(cache.kept('good')).toBeUndefined();
    expect(cache.hold('good', 5_000)).toBe(false);
  });

  it('a revocation (by sha256 of the secret) evicts at once', () => {
    const { cache } = setup();
    cache.put('good', token);
    expect(cache.revokeHash(sha256Hex('good'))).toBe(true);
    expect(cache.get('good')).toBeUndefined();
  });

  it('stays bounded', () => {
    const { cache } = setup();
    cache.put('a', token);
    cache.put('b', token);
    cache.put('c', token);
    expect(cache.size).toBe(2);
    expect(cache.get('a')).toBeUndefined();
  });
});

describe('AccountStates', () => {
  it.each([
    [1, 2, 'exhausted'],
    [3, 2, 'ok'],
  ])('version %i then %i keeps the higher', (first, second, expected) => {
    const states = new AccountStates();
    states.apply({ accountId: 'a', status: 'ok', nodeRps: 20, version: first });
    states.apply({ accountId: 'a', status: 'exhausted', nodeRps: 20, version: second });
    expect(states.get('a')!.status).toBe(expected);
  });
});

import { FakeClock } from '@meridian/time';
import { CachedCredentialSource } from './cached-credential-source';
import type { ApiKeyPrincipal, CredentialSource } from './credential-source';

describe('CachedCredentialSource', () => {
  const principal: ApiKeyPrincipal = {
    keyId: 'k',
    accountId: 'a',
    scopes: ['audit'],
    planId: 'free',
  };

  it('answers from memory within the TTL (positive and negative), shares concurrent misses, asks again after', async () => {
    const calls: string[] = [];
    const inner: CredentialSource = {
      resolveApiKey: async (key) => (calls.push(key), key === 'good' ? principal : null),
    };
    const clock = new FakeClock();
    const cache = new CachedCredentialSource(inner, clock, 30_000);
    await Promise.all([cache.resolveApiKey('good'), cache.resolveApiKey('good')]);
    expect(await cache.resolveApiKey('bad')).toBeNull();
    expect(await cache.resolveApiKey('bad')).toBeNull();
    expect(calls).toEqual(['good', 'bad']);
    clock.advance(30_001);
    expect(await cache.resolveApiKey('good')).toEqual(principal);
    expect(calls).toEqual(['good', 'bad', 'good']);
  });

  it('does not cache a failure of billing-ledger', async () => {
    let fail = true;
    const inner: CredentialSource = {
      resolveApiKey: async () => {
        if (fail) throw new Error('down');
        return principal;
      },
    };
    const cache = new CachedCredentialSource(inner, new FakeClock(), 30_000);
    await expect(cache.resolveApiKey('k')).rejects.toThrow('down');
    fail = false;
    expect(await cache.resolveApiKey('k')).toEqual(principal);
  });
});

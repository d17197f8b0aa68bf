import { FakeClock } from '@meridian/time';
import { CachedCredentialSource } from './cached-credential-source';
import type { AccountFacts, ApiKeyPrincipal, CredentialSource } from './credential-source';

const principal: ApiKeyPrincipal = { keyId: 'k', accountId: 'a', scopes: ['webhooks'] };

function source(calls: string[], fail = { keys: false }): CredentialSource {
  return {
    resolveApiKey: async (key) => {
      calls.push(key);
      if (fail.keys) throw new Error('down');
      return key === 'good' ? principal : null;
    },
    accountFacts: async (id) => (calls.push(`facts:${id}`), { accountId: id } as AccountFacts),
  };
}

describe('CachedCredentialSource', () => {
  it('answers keys from memory within the TTL (positive and negative), shares concurrent misses, asks again after', async () => {
    const calls: string[] = [];
    const clock = new FakeClock();
    const cache = new CachedCredentialSource(source(calls), clock, 30_000);
    await Promise.all([cache.resolveApiKey('good'), cache.resolveApiKey('good')]);
    expect(await cache.resolveApiKey('bad')).toBeNull();
    expect(await cache.resolveApiKey('bad')).toBeNull();
    expect(calls).toEqual(['good', 'bad']);
    clock.advance(30_001);
    expect(await cache.resolveApiKey('good')).toEqual(principal);
    expect(calls).toEqual(['good', 'bad', 'good']);
  });

  it('never caches account facts (caps and balance decide writes) nor a failure of billing', async () => {
    const calls: string[] = [];
    const fail = { keys: true };
    const cache = new CachedCredentialSource(source(calls, fail), new FakeClock(), 30_000);
    await cache.accountFacts('a');
    await cache.accountFacts('a');
    await expect(cache.resolveApiKey('good')).rejects.toThrow('down');
    fail.keys = false;
    expect(await cache.resolveApiKey('good')).toEqual(principal);
    expect(calls).toEqual(['facts:a', 'facts:a', 'good', 'good']);
  });
});

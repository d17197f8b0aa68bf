import { createHash } from 'node:crypto';
import { FakeClock } from '@meridian/time';
import { Registry } from 'prom-client';
import { API_KEY_KEPT_RETRY_MS, API_KEY_STALE_IF_ERROR_MS, ApiKeyCache } from './api-key-cache';

const hashOf = (key: string) => createHash('sha256').update(key).digest('hex');

function cacheOver(answers: Record<string, string | null>, clock = new FakeClock()) {
  const calls: string[] = [];
  const cache = new ApiKeyCache<string>(
    async (key) => (calls.push(key), answers[key] ?? null),
    () => clock.now().getTime(),
    30_000,
  );
  return { cache, calls, clock };
}

describe('ApiKeyCache', () => {
  it('answers from memory within the TTL (positive and negative), shares concurrent misses, asks again after', async () => {
    const { cache, calls, clock } = cacheOver({ good: 'principal' });
    expect(await Promise.all([cache.get('good'), cache.get('good')])).toEqual([
      'principal',
      'principal',
    ]);
    expect(await cache.get('bad')).toBeNull();
    expect(await cache.get('bad')).toBeNull();
    expect(calls).toEqual(['good', 'bad']);
    clock.advance(30_001);
    expect(await cache.get('good')).toBe('principal');
    expect(calls).toEqual(['good', 'bad', 'good']);
  });

  it('forgets a key as soon as its revocation names its sha256 (upper- or lower-case hex)', async () => {
    const answers: Record<string, string | null> = { good: 'principal', other: 'other' };
    const { cache, calls } = cacheOver(answers);
    await cache.get('good');
    await cache.get('other');
    answers['good'] = null; // deleted at billing-ledger
    cache.revokeHash(hashOf('good').toUpperCase());
    expect(await cache.get('good')).toBeNull();
    expect(await cache.get('other')).toBe('other');
    expect(calls).toEqual(['good', 'other', 'good']);
  });

  it('neither believes nor keeps an answer that was in flight when the revocation arrived', async () => {
    let release!: (value: string) => void;
    const calls: string[] = [];
    const cache = new ApiKeyCache<string>(
      (key) => (
        calls.push(key),
        calls.length === 1 ? new Promise((resolve) => (release = resolve)) : Promise.resolve(null)
      ),
      () => 0,
      30_000,
    );
    const first = cache.get('good');
    cache.revokeHash(hashOf('good'));
    release('principal'); // billing answered before the delete committed
    expect(await first).toBeNull();
    expect(await cache.get('good')).toBeNull();
    expect(calls).toEqual(['good', 'good']);
  });

  it('while billing-ledger fails, answers a key it knew for up to an hour past its TTL, never an unknown one', async () => {
    const clock = new FakeClock();
    let fail = false;
    let count = 0;
    const calls = () => count;
    const cache = new ApiKeyCache<string>(
      async (key) => {
        count++;
        if (fail) throw new Error('14 UNAVAILABLE');
        return key === 'good' ? 'principal' : null;
      },
      () => clock.now().getTime(),
      30_000,
    );
    const registry = new Registry();
    cache.count(registry);
    const kept = async () =>
      (await registry.getSingleMetric('api_key_cache_kept_total')!.get()).values[0]?.value ?? 0;
    expect(await cache.get('good')).toBe('principal');
    expect(await cache.get('bad')).toBeNull();
    expect(await kept()).toBe(0);
    fail = true;
    clock.advance(30_000);
    const before = calls();
    expect(await cache.get('good')).toBe('principal');
    expect(calls() - before).toBe(1);
    // Held: the next calls within the retry interval do not wait on billing-ledger again.
    clock.advance(API_KEY_KEPT_RETRY_MS - 1);
    expect(await cache.get('good')).toBe('principal');
    expect(calls() - before).toBe(1);
    clock.advance(1);
    expect(await cache.get('good')).toBe('principal');
    expect(calls() - before).toBe(2);
    expect(await kept()).toBe(2);
    await expect(cache.get('bad')).rejects.toThrow('UNAVAILABLE');
    await expect(cache.get('never-seen')).rejects.toThrow('UNAVAILABLE');
    clock.advance(API_KEY_STALE_IF_ERROR_MS - API_KEY_KEPT_RETRY_MS - 1);
    expect(await cache.get('good')).toBe('principal');
    clock.advance(API_KEY_KEPT_RETRY_MS + 1);
    await expect(cache.get('good')).rejects.toThrow('UNAVAILABLE');
  });

  it('a revocation ends a kept key at once, even while billing-ledger fails', async () => {
    const clock = new FakeClock();
    let fail = false;
    const cache = new ApiKeyCache<string>(
      async () => {
        if (fail) throw new Error('down');
        return 'principal';
      },
      () => clock.now().getTime(),
      30_000,
    );
    await cache.get('good');
    fail = true;
    clock.advance(30_000);
    cache.revokeHash(hashOf('good'));
    await expect(cache.get('good')).rejects.toThrow('down');
  });

  it('does not cache a failure of billing-ledger and keeps the secret out of memory', async () => {
    let fail = true;
    const cache = new ApiKeyCache<string>(
      async () => {
        if (fail) throw new Error('down');
        return 'principal';
      },
      () => 0,
      30_000,
    );
    await expect(cache.get('mrd_secret')).rejects.toThrow('down');
    fail = false;
    expect(await cache.get('mrd_secret')).toBe('principal');
    expect(
      JSON.stringify([...(cache as unknown as { entries: Map<string, unknown> }).entries]),
    ).not.toContain('mrd_secret');
  });
});

import { Metadata, status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { ERROR_CODE_METADATA, fromGrpcError } from '@meridian/platform-grpc';
import pino from 'pino';
import { Writable } from 'node:stream';
import { FakeClock } from '@meridian/time';
import { AccountStates, CredentialCache, sha256Hex, type ResolvedToken } from './credential-cache';
import { CredentialService, KEPT_RETRY_MS, type Lookup } from './credential.service';

const token: ResolvedToken = { tokenId: 't1', accountId: 'a1', network: 'eth-mainnet' };
const TTL = 60_000;
const STALE = 3_600_000;

/** A credential source this test answers by hand: resolves, refuses or fails each lookup. */
class ScriptedSource {
  calls = 0;
  answer: () => Promise<ResolvedToken | null> = async () => token;
  resolve(): Promise<ResolvedToken | null> {
    this.calls++;
    return this.answer();
  }
}

const down = async (): Promise<never> => {
  throw new Error('14 UNAVAILABLE: billing-ledger unreachable');
};

function setup(staleIfErrorMs = STALE) {
  const clock = new FakeClock();
  const cache = new CredentialCache(() => clock.now().getTime(), {
    positiveTtlMs: TTL,
    negativeTtlMs: 5_000,
    staleIfErrorMs,
    maxEntries: 100,
  });
  const source = new ScriptedSource();
  let kept = 0;
  const service = new CredentialService(
    cache,
    new AccountStates(),
    source,
    pino({ level: 'silent' }),
    () => kept++,
  );
  const lookup = async (t = 'tok'): Promise<Lookup> => service.lookup(t);
  return { clock, source, service, lookup, kept: () => kept };
}

/** Lets a background refresh settle. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('CredentialService', () => {
  it('resolves a token once, then answers it from memory while fresh', async () => {
    const { source, service, lookup } = setup();
    expect(await lookup()).toEqual({ found: true, token });
    expect(service.lookup('tok')).toEqual({ found: true, token }); // synchronous
    expect(source.calls).toBe(1);
  });

  it('a first sight while the source is down is unavailable (503 at the edge)', async () => {
    const { source, lookup } = setup();
    source.answer = down;
    expect(await lookup()).toEqual({ unavailable: true });
  });

  it('past its freshness a known token is served at once and refreshed in the background', async () => {
    const { clock, source, service, lookup } = setup();
    await lookup();
    clock.advance(TTL);
    const revoked = { tokenId: 't1', accountId: 'a2', network: 'eth-mainnet' as const };
    source.answer = async () => revoked;
    expect(service.lookup('tok')).toEqual({ found: true, token }); // synchronous, the kept one
    await settle();
    expect(source.calls).toBe(2);
    expect(service.lookup('tok')).toEqual({ found: true, token: revoked });
  });

  it('a refresh that finds the token gone makes it unknown from the next call on', async () => {
    const { clock, source, service, lookup } = setup();
    await lookup();
    clock.advance(TTL);
    source.answer = async () => null;
    expect(service.lookup('tok')).toEqual({ found: true, token });
    await settle();
    expect(service.lookup('tok')).toEqual({ found: false });
  });

  it('with the source down, a known token stays in service until its keeping ends, asking again every retry interval', async () => {
    const { clock, source, service, lookup, kept } = setup();
    await lookup();
    source.answer = down;
    clock.advance(TTL);
    expect(service.lookup('tok')).toEqual({ found: true, token });
    await settle();
    expect(source.calls).toBe(2);
    expect(kept()).toBe(1);

    // Held: answered from memory without asking the source again.
    clock.advance(KEPT_RETRY_MS - 1);
    expect(service.lookup('tok')).toEqual({ found: true, token });
    await settle();
    expect(source.calls).toBe(2);

    // The next try, and so on until the keeping ends.
    clock.advance(1);
    expect(service.lookup('tok')).toEqual({ found: true, token });
    await settle();
    expect(source.calls).toBe(3);
    expect(kept()).toBe(2);

    clock.advance(STALE);
    expect(await lookup()).toEqual({ unavailable: true });
  });

  it('a refresh after the source is back replaces the kept token', async () => {
    const { clock, source, service, lookup } = setup();
    await lookup();
    source.answer = down;
    clock.advance(TTL);
    service.lookup('tok');
    await settle();
    source.answer = async () => token;
    clock.advance(KEPT_RETRY_MS);
    service.lookup('tok');
    await settle();
    clock.advance(TTL - 1);
    expect(service.lookup('tok')).toEqual({ found: true, token });
    expect(source.calls).toBe(3);
  });

  it('a revocation ends a kept token at once', async () => {
    const { clock, source, service, lookup } = setup();
    await lookup();
    source.answer = down;
    clock.advance(TTL);
    service.lookup('tok');
    await settle();
    service.revokeHash(sha256Hex('tok'));
    expect(await lookup()).toEqual({ unavailable: true });
  });

  it('with stale-if-error off, a token past its freshness waits for the source (today: 503)', async () => {
    const { clock, source, lookup, kept } = setup(0);
    await lookup();
    source.answer = down;
    clock.advance(TTL);
    expect(await lookup()).toEqual({ unavailable: true });
    expect(kept()).toBe(0);
  });

  /**
   * QA, operator angle: with billing-ledger's Postgres down every first sight failed with a
   * level-50 line and a grpc-js stack (~2.5 KB) per request, not naming the database.
   */
  it('logs an outage of billing-ledger once per cause at warn, and once when it answers', async () => {
    const clock = new FakeClock();
    const lines: Array<{ level: number; msg: string; cause?: unknown; err?: unknown }> = [];
    const logger = pino(
      { level: 'debug' },
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(JSON.parse(chunk.toString()) as (typeof lines)[number]);
          done();
        },
      }),
    );
    const source = new ScriptedSource();
    const service = new CredentialService(
      new CredentialCache(() => clock.now().getTime(), {
        positiveTtlMs: TTL,
        negativeTtlMs: 0,
        staleIfErrorMs: STALE,
        maxEntries: 100,
      }),
      new AccountStates(),
      source,
      logger,
      () => undefined,
      () => clock.now().getTime(),
    );
    const metadata = new Metadata();
    metadata.set(ERROR_CODE_METADATA, 'database_unavailable');
    const databaseDown = fromGrpcError(
      Object.assign(new Error('14 UNAVAILABLE'), {
        code: GrpcStatus.UNAVAILABLE,
        details: "billing-ledger's database cannot be reached right now; retry later",
        metadata,
      }) as ServiceError,
    );
    source.answer = () => Promise.reject(databaseDown);
    for (const t of ['t1', 't2', 't3'])
      expect(await service.lookup(t)).toEqual({ unavailable: true });
    source.answer = down; // another cause: logged once too
    for (const t of ['t4', 't5']) expect(await service.lookup(t)).toEqual({ unavailable: true });
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
    const warned = lines.filter((line) => line.level === 40);
    expect(warned.map((line) => line.msg)).toEqual([
      "billing-ledger cannot be asked: UNAVAILABLE database_unavailable: billing-ledger's database cannot be reached right now; retry later; " +
        'tokens not resolved before answer -32000 "access token check unavailable, retry later" (HTTP 503), tokens resolved before are served (logged once per cause until it answers)',
      expect.stringMatching(
        /^billing-ledger cannot be asked: 14 UNAVAILABLE: billing-ledger unreachable; /,
      ),
    ]);
    expect(warned.some((line) => 'err' in line)).toBe(false); // no stack

    clock.advance(12_000);
    source.answer = async () => token;
    expect(await service.lookup('t6')).toEqual({ found: true, token });
    expect(await service.lookup('t7')).toEqual({ found: true, token });
    expect(lines.filter((line) => line.level === 30).map((line) => line.msg)).toEqual([
      "billing-ledger answers again after 12.0 s (was: UNAVAILABLE database_unavailable: billing-ledger's database cannot be reached right now; retry later)",
    ]);

    source.answer = () => Promise.reject(databaseDown); // a new outage is logged again
    expect(await service.lookup('t8')).toEqual({ unavailable: true });
    expect(lines.filter((line) => line.level === 40)).toHaveLength(3);
  });
});

import { status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { billingV1 } from '@meridian/contracts';
import { DomainError } from '@meridian/errors';
import { createGrpcClient } from '@meridian/platform-grpc';
import { startCuttableTcpRelay, type CuttableTcpRelay } from '@meridian/testing';
import { Writable } from 'node:stream';
import { BillingGrpcServer } from '../grpc/billing.grpc';
import { api, BillingHarness, OPERATOR_TOKEN, type BillingApp } from '../testing/billing-harness';

/**
 * Postgres out of reach while the app runs (QA, failure testing: 500 `internal` before): the
 * account API answers 503 `database_unavailable` with Retry-After (libs/platform/http's filter,
 * isDatabaseUnreachable of libs/platform/db), and answers normally once Postgres is back. The
 * app's Postgres is the test server behind a relay, cut mid-test.
 */
describe('billing-ledger with its Postgres out of reach (real Postgres behind a relay)', () => {
  const h = new BillingHarness();
  let relay: CuttableTcpRelay;
  let billing: BillingApp;
  const lines: Array<{ level: number; msg: string }> = [];

  beforeAll(async () => {
    await h.setup();
    const url = new URL(h.db.url);
    relay = await startCuttableTcpRelay(Number(url.port || 5432));
    url.host = `127.0.0.1:${relay.port}`;
    const logTo = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean))
          lines.push(JSON.parse(line) as { level: number; msg: string });
        done();
      },
    });
    billing = await h.start({ DATABASE_URL: url.toString(), LOG_LEVEL: 'info' }, { logTo });
  });
  afterAll(async () => {
    await relay?.close();
    await h.teardown();
  });

  const get = async (path: string, key: string) => {
    const response = await fetch(`${billing.url}${path}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    return {
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      body: (await response.json()) as Record<string, unknown>,
    };
  };

  it('answers 503 database_unavailable with Retry-After while cut, and normally once back', async () => {
    const created = await api<{ api_key: { key: string } }>(
      billing.url,
      'POST',
      '/api/v1/admin/accounts',
      OPERATOR_TOKEN,
      { name: 'database-outage', plan: 'starter' },
    );
    expect(created.status).toBe(201);
    const key = created.body.api_key.key;
    const routes = ['/api/v1/account/balance', '/api/v1/account/usage'];
    for (const path of routes) expect((await get(path, key)).status).toBe(200);

    await relay.cut();
    for (const path of routes) {
      // Twice: the pool's lost connections first, then a refused new one.
      for (let i = 0; i < 2; i += 1)
        expect(await get(path, key)).toEqual({
          status: 503,
          retryAfter: '2',
          body: {
            error: 'database_unavailable',
            message: 'the database cannot be reached right now; retry later',
            request_id: expect.any(String),
          },
        });
    }

    await relay.restore();
    for (const path of routes) expect((await get(path, key)).status).toBe(200);
  });

  /**
   * The gateway's and webhook-matcher's credential calls (QA: INTERNAL "internal error" before,
   * which the callers logged as an internal failure per request): UNAVAILABLE naming the
   * database, with the stable code in the trailer; the outage logged once by the ledger.
   */
  it('answers billing.v1 calls UNAVAILABLE database_unavailable while cut, and OK once back', async () => {
    const grpc = createGrpcClient(
      billingV1.BillingService,
      `127.0.0.1:${billing.app.get(BillingGrpcServer).port}`,
      { defaultTimeoutMs: 10_000 },
    );
    try {
      expect((await grpc.resolveApiKey({ key: 'mk_unknown' })).found).toBe(false);
      // This outage's lines: the previous test's outage may have logged its own once (when a
      // periodic job ran during its cut; CI once counted both as this one's two).
      const before = lines.length;
      await relay.cut();
      for (let i = 0; i < 3; i += 1) {
        const error = await grpc.resolveAccessToken({ token: 'a'.repeat(32) }).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(DomainError);
        const failure = error as DomainError;
        expect([failure.code, failure.kind, failure.message]).toEqual([
          'database_unavailable',
          'unavailable',
          "billing-ledger's database cannot be reached right now; retry later",
        ]);
        expect((failure.cause as ServiceError).code).toBe(GrpcStatus.UNAVAILABLE);
      }
      const outage = lines
        .slice(before)
        .filter((line) => line.msg.startsWith('Postgres unreachable'));
      expect(outage.length).toBeLessThanOrEqual(1);
      expect(lines.filter((line) => line.level >= 50)).toEqual([]);
      await relay.restore();
      expect((await grpc.resolveApiKey({ key: 'mk_unknown' })).found).toBe(false);
    } finally {
      grpc.close();
    }
  });
});

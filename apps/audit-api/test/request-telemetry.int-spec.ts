import { FakeClock, sampleOf } from '@meridian/testing';
import pino from 'pino';
import { buildInfo } from '@meridian/platform-observability';
import { startAuditApp, type AuditTestApp } from './support/audit-app';
import { startBillingLedger, type RunningBillingLedger } from './support/billing-ledger.process';

const NODE_TOKEN = 'QAEFAKEACCESSTOKEN0123456789abcdef0123';
const QUERY_SECRET = 'qs_SECRETINTHEQUERY0123456789';
const USDT = '0xdAC17F958D2ee523a2206206994597C13D831ec7';

/**
 * The REST edge's request metrics and access log on a real app: audit-api in-process (captured
 * pino), its credentials through the real billing-ledger's gRPC, whose own /metrics then counts
 * those calls. A 200, a 400, an unmatched 404 and a 5xx (a node that refuses: 502); the labels and
 * the lines hold route templates only: no path id, query string, key or node token.
 */
describe('audit-api: request metrics and access log (real billing-ledger)', () => {
  let billing: RunningBillingLedger;
  let audit: AuditTestApp;
  const lines: string[] = [];
  let key: string;

  beforeAll(async () => {
    billing = await startBillingLedger();
    audit = await startAuditApp(
      {
        BILLING_GRPC_URL: billing.grpcTarget,
        AUDIT_RPC_URLS: JSON.stringify({ ETH: `http://127.0.0.1:1/${NODE_TOKEN}/` }),
      },
      { clock: new FakeClock('2026-03-02T08:00:00.000Z') },
      { logger: pino({ level: 'info' }, { write: (line: string) => void lines.push(line) }) },
    );
    key = (await billing.createAccount('premium')).key;
  }, 90_000);

  afterAll(async () => {
    await audit?.close();
    await billing?.stop();
  });

  const get = async (url: string, withKey = true) =>
    (
      await audit.app.inject({
        method: 'GET',
        url,
        headers: withKey
          ? { authorization: `Bearer ${key}`, cookie: `session=${QUERY_SECRET}` }
          : {},
      })
    ).statusCode;

  it('counts each answer by route template and status, and logs one clean line for each', async () => {
    expect(await get('/v1/quota')).toBe(200);
    expect(await get(`/v1/quota?apikey=${QUERY_SECRET}`)).toBe(400);
    expect(await get(`/v1/accounts/${QUERY_SECRET}?token=${QUERY_SECRET}`)).toBe(404);
    const check = await audit.post(
      '/v1/rug-pull/check',
      { network: 'ETH', contract_address: USDT },
      key,
    );
    expect(check.status).toBe(502);
    expect(await get('/healthz', false)).toBe(200);

    const metrics = (await audit.app.inject({ method: 'GET', url: '/metrics' })).body;
    const requests = (method: string, route: string, status: string) =>
      sampleOf(metrics, 'http_server_requests_total', {
        service: 'audit-api',
        method,
        route,
        status,
      });
    expect(requests('GET', '/v1/quota', '200')).toBe(1);
    expect(requests('GET', '/v1/quota', '400')).toBe(1);
    expect(requests('GET', 'unmatched', '404')).toBe(1);
    expect(requests('POST', '/v1/rug-pull/check', '502')).toBe(1);
    expect(
      sampleOf(metrics, 'http_server_request_duration_seconds_count', {
        service: 'audit-api',
        method: 'POST',
        route: '/v1/rug-pull/check',
        status: '502',
      }),
    ).toBe(1);
    expect(metrics).not.toMatch(/route="\/(healthz|readyz|metrics)"/);
    // Which release and commit answer (libs/platform/observability build-info.ts).
    expect(
      sampleOf(metrics, 'meridian_build_info', {
        service: 'audit-api',
        app: 'audit-api',
        ...buildInfo(),
      }),
    ).toBe(1);
    for (const secret of [QUERY_SECRET, NODE_TOKEN, key]) expect(metrics).not.toContain(secret);

    const access = lines
      .map((text) => JSON.parse(text) as Record<string, unknown>)
      .filter((line) => line['msg'] === 'request');
    expect(access.map(({ method, route, status }) => ({ method, route, status }))).toEqual([
      { method: 'GET', route: '/v1/quota', status: 200 },
      { method: 'GET', route: '/v1/quota', status: 400 },
      { method: 'GET', route: 'unmatched', status: 404 },
      { method: 'POST', route: '/v1/rug-pull/check', status: 502 },
    ]);
    for (const line of access)
      expect(line).toEqual(
        expect.objectContaining({
          level: 30,
          ms: expect.any(Number),
          request_id: expect.any(String),
        }),
      );
    const logged = lines.join('');
    for (const secret of [QUERY_SECRET, NODE_TOKEN, key]) expect(logged).not.toContain(secret);
    expect(logged.toLowerCase()).not.toMatch(/authorization|cookie|apikey/);
  });

  it("billing-ledger's gRPC server counts and times the key checks audit-api made", async () => {
    const metrics = await (await fetch(`${billing.url}/metrics`)).text();
    const labels = {
      service: 'billing-ledger',
      grpc_service: 'billing.v1.BillingService',
      grpc_method: 'ResolveApiKey',
      grpc_code: 'OK',
    };
    expect(sampleOf(metrics, 'grpc_server_handled_total', labels)).toBeGreaterThanOrEqual(1);
    expect(sampleOf(metrics, 'grpc_server_handling_seconds_count', labels)).toBeGreaterThanOrEqual(
      1,
    );
    expect(metrics).not.toContain(key);
  });
});

import { FakeClock, startAnvil, type AnvilInstance } from '@meridian/testing';
import { startAuditApp, type AuditTestApp } from './support/audit-app';
import { startBillingLedger, type RunningBillingLedger } from './support/billing-ledger.process';

const FRESH = '0x1111111111111111111111111111111111111111';

describe('audit API: GET /v1/quota (today of the daily check quota)', () => {
  let billing: RunningBillingLedger;
  let anvil: AnvilInstance;
  let audit: AuditTestApp;
  const clock = new FakeClock('2026-03-02T08:00:00.000Z');

  beforeAll(async () => {
    [billing, anvil] = await Promise.all([startBillingLedger(), startAnvil({ chainId: 1 })]);
    audit = await startAuditApp(
      { BILLING_GRPC_URL: billing.grpcTarget, AUDIT_RPC_URLS: JSON.stringify({ ETH: anvil.url }) },
      { clock },
    );
  }, 90_000);

  afterAll(async () => {
    await audit?.close();
    await Promise.all([billing?.stop(), anvil?.stop()]);
  });

  const quota = async (key?: string) => {
    const response = await audit.app.inject({
      method: 'GET',
      url: '/v1/quota',
      headers: key ? { authorization: `Bearer ${key}` } : {},
    });
    return { status: response.statusCode, body: response.json() as Record<string, unknown> };
  };

  it('counts the checks of the current 07:30 UTC window and costs none itself', async () => {
    const free = (await billing.createAccount('free')).key;
    expect(await quota(free)).toEqual({
      status: 200,
      body: { limit: 5, used: 0, resets_at: '2026-03-03T07:30:00.000Z' },
    });
    clock.advance(2_000);
    const check = await audit.post(
      '/v1/wallet-audit/check',
      { network: 'ETH', address: FRESH },
      free,
    );
    expect(check.status).toBe(200);
    expect((await quota(free)).body).toMatchObject({ used: 1 });
    expect((await quota(free)).body).toMatchObject({ used: 1 });
    clock.set('2026-03-03T07:30:00.000Z');
    expect((await quota(free)).body).toEqual({
      limit: 5,
      used: 0,
      resets_at: '2026-03-04T07:30:00.000Z',
    });
  });

  it('answers 401 without a key', async () => {
    const none = await quota();
    expect([none.status, none.body['error']]).toEqual([401, 'missing_api_key']);
  });

  it('serves its OpenAPI document and a reference page', async () => {
    const json = await audit.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(json.statusCode).toBe(200);
    const document = json.json() as { openapi: string; paths: Record<string, unknown> };
    expect(document.openapi).toBe('3.1.0');
    expect(Object.keys(document.paths)).toContain('/v1/wallet-audit/check');
    const page = await audit.app.inject({ method: 'GET', url: '/reference' });
    expect([page.statusCode, page.headers['content-type']]).toEqual([
      200,
      'text/html; charset=utf-8',
    ]);
    expect(page.body).toContain('/v1/rug-pull/check');
  });
});

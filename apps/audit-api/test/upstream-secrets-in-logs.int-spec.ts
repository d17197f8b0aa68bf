import { FakeClock } from '@meridian/testing';
import pino from 'pino';
import { errorResponseSchema } from '../src/wallet/audit-response.schemas';
import { startAuditApp, type AuditTestApp } from './support/audit-app';
import { startBillingLedger, type RunningBillingLedger } from './support/billing-ledger.process';

const TOKEN = 'QAEFAKEACCESSTOKEN0123456789abcdef0123';
const USDT = '0xdAC17F958D2ee523a2206206994597C13D831ec7';

/**
 * QA E D1: a node URL's access token never reaches the logs. The node refuses (port 1), the
 * check is 502 upstream_unavailable, and every line audit-api wrote holds the node's origin at
 * most: not its path (the token), and no stack quoting it.
 */
describe('audit-api: the node URL token stays out of the logs (real billing-ledger)', () => {
  let billing: RunningBillingLedger;
  let audit: AuditTestApp;
  const lines: string[] = [];
  let key: string;

  beforeAll(async () => {
    billing = await startBillingLedger();
    audit = await startAuditApp(
      {
        BILLING_GRPC_URL: billing.grpcTarget,
        AUDIT_RPC_URLS: JSON.stringify({ ETH: `http://127.0.0.1:1/${TOKEN}/` }),
      },
      { clock: new FakeClock('2026-03-02T08:00:00.000Z') },
      { logger: pino({ level: 'trace' }, { write: (line: string) => void lines.push(line) }) },
    );
    key = (await billing.createAccount('premium')).key;
  }, 90_000);

  afterAll(async () => {
    await audit?.close();
    await billing?.stop();
  });

  it('logs the refused node as its origin only when a rug-pull check fails with 502', async () => {
    const response = await audit.post(
      '/v1/rug-pull/check',
      { network: 'ETH', contract_address: USDT },
      key,
    );
    expect(response.status).toBe(502);
    expect(errorResponseSchema.parse(response.body).error).toBe('upstream_unavailable');

    const logged = lines.join('');
    expect(logged).not.toContain(TOKEN);
    const line = lines
      .map((text) => JSON.parse(text) as Record<string, unknown>)
      .find((entry) => entry['msg'] === 'audit upstream unavailable');
    expect(line).toBeDefined();
    // The cause is still there to read: the failing request and the node's origin.
    expect(JSON.stringify(line!['cause'])).toContain('http://127.0.0.1:1');
    expect(JSON.stringify(line)).not.toContain('"stack"');
  });
});

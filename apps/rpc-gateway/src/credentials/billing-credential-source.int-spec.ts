import { grpcTlsOf, parseConfig } from '@meridian/platform-config';
import { provisionMessaging } from '@meridian/platform-messaging';
import {
  deleteNatsNamespace,
  runAppScript,
  startBillingLedgerProcess,
  testNatsUrl,
  TestPki,
  uniqueNatsPrefix,
  type BillingLedgerProcess,
  type TestCa,
  type TestIdentity,
} from '@meridian/testing';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { configSchema } from '../config/config';
import { BillingCredentialSource } from './billing-credential-source';

/**
 * The wiring of ADR 0506 end to end: the REAL billing-ledger (its own process) started with
 * GRPC_TLS_* and client authentication required, and the gateway's credential source built from
 * the gateway's own config schema, as app.module does. A misconfigured billing-ledger stops at
 * start with its one line.
 */
const OPERATOR_TOKEN = 'op_grpc_mtls_test_0123456789abcd';

describe('rpc-gateway → billing-ledger over mutual TLS', () => {
  let pki: TestPki;
  let ca: TestCa;
  let ledgerId: TestIdentity;
  let gatewayId: TestIdentity;
  let ledger: BillingLedgerProcess;
  let token: string;
  const prefix = uniqueNatsPrefix();

  /** The gateway's source from a gateway environment (the config's GRPC_TLS_* variables). */
  const sourceFrom = (env: Record<string, string>) => {
    const config = parseConfig(configSchema, {
      REGION: 'eu',
      HTTP_PORT: '0',
      BILLING_GRPC_URL: ledger.grpcTarget,
      ...env,
    });
    return new BillingCredentialSource(config.BILLING_GRPC_URL, grpcTlsOf(config));
  };

  beforeAll(async () => {
    pki = new TestPki();
    ca = await pki.ca('meridian internal CA');
    ledgerId = await ca.issue('billing-ledger', ['billing-ledger', 'localhost', '127.0.0.1']);
    gatewayId = await ca.issue('rpc-gateway');
    const nc = await connect({ servers: testNatsUrl() });
    await provisionMessaging(await jetstreamManager(nc), prefix);
    await nc.close();
    ledger = await startBillingLedgerProcess({
      operatorToken: OPERATOR_TOKEN,
      natsPrefix: prefix,
      databasePrefix: 'billing_mtls',
      env: {
        NATS_URL: testNatsUrl(),
        LOG_LEVEL: 'warn',
        GRPC_TLS_CA_FILE: ca.certFile,
        GRPC_TLS_CERT_FILE: ledgerId.certFile,
        GRPC_TLS_KEY_FILE: ledgerId.keyFile,
        GRPC_TLS_CLIENT_AUTH: 'require',
      },
      startTimeoutMs: 90_000,
    });
    const created = await ledger.call('POST', '/api/v1/admin/accounts', OPERATOR_TOKEN, {
      name: 'mtls',
      type: 'individual',
      plan: 'growth',
    });
    const apiKey = (created['api_key'] as { key: string }).key;
    token = (
      await ledger.call('POST', '/api/v1/access-tokens', apiKey, { network: 'eth-mainnet' })
    )['token'] as string;
  }, 180_000);

  afterAll(async () => {
    await ledger?.stop();
    await deleteNatsNamespace(testNatsUrl(), prefix).catch(() => undefined);
    pki?.remove();
  });

  it('resolves a token with the CA and the gateway certificate', async () => {
    const source = sourceFrom({
      GRPC_TLS_CA_FILE: ca.certFile,
      GRPC_TLS_CERT_FILE: gatewayId.certFile,
      GRPC_TLS_KEY_FILE: gatewayId.keyFile,
    });
    try {
      await expect(source.resolve(token)).resolves.toMatchObject({ network: 'eth-mainnet' });
    } finally {
      source.close();
    }
  });

  it('is refused without a client certificate, and in plaintext', async () => {
    const envs: Array<Record<string, string>> = [{ GRPC_TLS_CA_FILE: ca.certFile }, {}];
    for (const env of envs) {
      const source = sourceFrom(env);
      try {
        await expect(source.resolve(token)).rejects.toMatchObject({ kind: 'unavailable' });
      } finally {
        source.close();
      }
    }
  });

  it('billing-ledger given a certificate without its key stops at start, naming the variable', async () => {
    const run = runAppScript(
      'apps/billing-ledger/src/main.ts',
      {
        DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/unused',
        HTTP_PORT: '0',
        OPERATOR_TOKEN,
        GRPC_TLS_CERT_FILE: ledgerId.certFile,
      },
      { timeoutMs: 60_000 },
    );
    await expect(run).rejects.toThrow(
      /exited 1:\n[^]*config error: GRPC_TLS_KEY_FILE is required: GRPC_TLS_CERT_FILE is set/,
    );
  });
});

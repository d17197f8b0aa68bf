import { parseConfig } from '@meridian/platform-config';
import { ReadinessRegistry } from '@meridian/platform-observability';
import { certificateNotAfterIn, notAfterSeconds, TestPki } from '@meridian/testing';
import { systemClock } from '@meridian/time';
import pino from 'pino';
import { Registry } from 'prom-client';
import type { AccountsService } from '../accounts/accounts.service';
import { configSchema } from '../config/config';
import type { CredentialsService } from '../credentials/credentials.service';
import { BillingGrpcServer } from './billing.grpc';

describe('billing-ledger: the billing.v1 server certificate in the registry', () => {
  const pki = new TestPki();
  afterAll(() => pki.remove());

  it('is grpc_tls_certificate_not_after_seconds{tls="billing.v1",role="server"}', async () => {
    const ca = await pki.ca();
    const id = await ca.issue('billing-ledger', ['localhost', '127.0.0.1']);
    const config = parseConfig(configSchema, {
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: '0',
      GRPC_PORT: '0',
      DATABASE_URL: 'postgres://billing:pw@127.0.0.1:5432/meridian',
      OPERATOR_TOKEN: 'op_test_token_0123456789',
      GRPC_TLS_CA_FILE: ca.certFile,
      GRPC_TLS_CERT_FILE: id.certFile,
      GRPC_TLS_KEY_FILE: id.keyFile,
      GRPC_TLS_CLIENT_AUTH: 'require',
    });
    const registry = new Registry();
    // Starting the server reads the files; no call reaches the services.
    const server = new BillingGrpcServer(
      {} as CredentialsService,
      {} as AccountsService,
      new ReadinessRegistry(),
      systemClock,
      config,
      pino({ level: 'silent' }),
      registry,
    );
    await server.onApplicationBootstrap();
    try {
      expect(await certificateNotAfterIn(registry, { tls: 'billing.v1', role: 'server' })).toBe(
        notAfterSeconds(id.cert),
      );
    } finally {
      await server.onApplicationShutdown();
    }
  });
});

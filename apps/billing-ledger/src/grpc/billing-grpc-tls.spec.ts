import { parseConfig } from '@meridian/platform-config';
import { DbJobGate } from '@meridian/platform-db';
import { ReadinessRegistry } from '@meridian/platform-observability';
import { reportedCertificate } from '@meridian/testing';
import { systemClock } from '@meridian/time';
import pino from 'pino';
import type { AccountsService } from '../accounts/accounts.service';
import { configSchema } from '../config/config';
import type { CredentialsService } from '../credentials/credentials.service';
import { BillingGrpcServer } from './billing.grpc';

describe('billing-ledger: the billing.v1 server certificate in the registry', () => {
  it('is grpc_tls_certificate_not_after_seconds{tls="billing.v1",role="server"}', async () => {
    const { reported, notAfter } = await reportedCertificate(
      {
        name: 'billing-ledger',
        names: ['localhost', '127.0.0.1'],
        tls: 'billing.v1',
        role: 'server',
      },
      async (tlsEnv, registry) => {
        const config = parseConfig(configSchema, {
          HTTP_HOST: '127.0.0.1',
          HTTP_PORT: '0',
          GRPC_PORT: '0',
          DATABASE_URL: 'postgres://billing:pw@127.0.0.1:5432/meridian',
          OPERATOR_TOKEN: 'op_test_token_0123456789',
          ...tlsEnv,
          GRPC_TLS_CLIENT_AUTH: 'require',
        });
        // Starting the server reads the files; no call reaches the services.
        const server = new BillingGrpcServer(
          {} as CredentialsService,
          {} as AccountsService,
          new ReadinessRegistry(),
          systemClock,
          config,
          pino({ level: 'silent' }),
          registry,
          DbJobGate.of({ isInitialized: false }),
        );
        await server.onApplicationBootstrap();
        return () => server.onApplicationShutdown();
      },
    );
    expect(reported).toBe(notAfter);
  });
});

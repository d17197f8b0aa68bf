import { parseConfig } from '@meridian/platform-config';
import { reportedCertificate } from '@meridian/testing';
import pino from 'pino';
import { credentialSourceOf } from './app.module';
import type { BorApiService } from './bor-grpc/bor-api.service';
import { startBorGrpc } from './bor-grpc/bor-grpc.server';
import { configSchema } from './config/config';
import type { BillingCredentialSource } from './credentials/billing-credential-source';

/**
 * Both certificates a gateway loads are in its registry (MeridianGrpcCertificateExpiring): its
 * client certificate to billing-ledger (mutual TLS) and BorApi's public server certificate.
 */
describe('rpc-gateway: gRPC TLS certificates in the registry', () => {
  const logger = pino({ level: 'silent' });

  it('the billing.v1 client certificate, as app.module builds the credential source', async () => {
    const { reported, notAfter } = await reportedCertificate(
      { name: 'rpc-gateway', tls: 'billing.v1', role: 'client' },
      (tlsEnv, registry) => {
        const config = parseConfig(configSchema, {
          REGION: 'eu',
          HTTP_PORT: '0',
          BILLING_GRPC_URL: '127.0.0.1:1',
          ...tlsEnv,
        });
        const source = credentialSourceOf(config, logger, registry) as BillingCredentialSource;
        return () => source.close();
      },
    );
    expect(reported).toBe(notAfter);
  });

  it("BorApi's public server certificate", async () => {
    const { reported, notAfter } = await reportedCertificate(
      { name: 'eu.grpc.example', names: ['localhost', '127.0.0.1'], tls: 'bor', role: 'server' },
      async (tlsEnv, registry) => {
        const server = await startBorGrpc({} as BorApiService, {
          host: '127.0.0.1',
          port: 0,
          logger,
          registry,
          tls: { certFile: tlsEnv.GRPC_TLS_CERT_FILE, keyFile: tlsEnv.GRPC_TLS_KEY_FILE },
        });
        return () => server.close(0);
      },
    );
    expect(reported).toBe(notAfter);
  });
});

import { parseConfig } from '@meridian/platform-config';
import { certificateNotAfterIn, notAfterSeconds, TestPki } from '@meridian/testing';
import pino from 'pino';
import { Registry } from 'prom-client';
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
  const pki = new TestPki();
  const logger = pino({ level: 'silent' });
  afterAll(() => pki.remove());

  it('the billing.v1 client certificate, as app.module builds the credential source', async () => {
    const ca = await pki.ca();
    const id = await ca.issue('rpc-gateway');
    const config = parseConfig(configSchema, {
      REGION: 'eu',
      HTTP_PORT: '0',
      BILLING_GRPC_URL: '127.0.0.1:1',
      GRPC_TLS_CA_FILE: ca.certFile,
      GRPC_TLS_CERT_FILE: id.certFile,
      GRPC_TLS_KEY_FILE: id.keyFile,
    });
    const registry = new Registry();
    const source = credentialSourceOf(config, logger, registry) as BillingCredentialSource;
    try {
      expect(await certificateNotAfterIn(registry, { tls: 'billing.v1', role: 'client' })).toBe(
        notAfterSeconds(id.cert),
      );
    } finally {
      source.close();
    }
  });

  it("BorApi's public server certificate", async () => {
    const ca = await pki.ca();
    const id = await ca.issue('eu.grpc.example', ['localhost', '127.0.0.1']);
    const registry = new Registry();
    const server = await startBorGrpc({} as BorApiService, {
      host: '127.0.0.1',
      port: 0,
      logger,
      registry,
      tls: { certFile: id.certFile, keyFile: id.keyFile },
    });
    try {
      expect(await certificateNotAfterIn(registry, { tls: 'bor', role: 'server' })).toBe(
        notAfterSeconds(id.cert),
      );
    } finally {
      await server.close(0);
    }
  });
});

import { parseConfig } from '@meridian/platform-config';
import { certificateNotAfterIn, notAfterSeconds, TestPki } from '@meridian/testing';
import { Registry } from 'prom-client';
import { configSchema } from '../config/config';
import { GrpcCredentialSource } from './grpc-credential-source';

const silent = { info: () => undefined, error: () => undefined };

describe('the billing.v1 client as the app builds it (mutual TLS)', () => {
  const pki = new TestPki();
  afterAll(() => pki.remove());

  it('exports its client certificate in the app registry (MeridianGrpcCertificateExpiring)', async () => {
    const ca = await pki.ca();
    const id = await ca.issue('webhook-matcher');
    const config = parseConfig(configSchema, {
      HTTP_PORT: '0',
      DATABASE_URL: 'postgres://app:pw@127.0.0.1:5432/meridian',
      BILLING_GRPC_URL: '127.0.0.1:1',
      // 32 bytes, base64 (the app refuses to start without its key).
      WEBHOOK_SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
      GRPC_TLS_CA_FILE: ca.certFile,
      GRPC_TLS_CERT_FILE: id.certFile,
      GRPC_TLS_KEY_FILE: id.keyFile,
    });
    const registry = new Registry();
    const source = GrpcCredentialSource.fromConfig(config, silent, registry);
    try {
      expect(await certificateNotAfterIn(registry, { tls: 'billing.v1', role: 'client' })).toBe(
        notAfterSeconds(id.cert),
      );
    } finally {
      source.close();
    }
  });
});

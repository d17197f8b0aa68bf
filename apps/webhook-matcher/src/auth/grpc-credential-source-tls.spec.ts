import { parseConfig } from '@meridian/platform-config';
import { reportedCertificate } from '@meridian/testing';
import { configSchema } from '../config/config';
import { GrpcCredentialSource } from './grpc-credential-source';

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

describe('the billing.v1 client as the app builds it (mutual TLS)', () => {
  it('exports its client certificate in the app registry (MeridianGrpcCertificateExpiring)', async () => {
    const { reported, notAfter } = await reportedCertificate(
      { name: 'webhook-matcher', tls: 'billing.v1', role: 'client' },
      (tlsEnv, registry) => {
        const config = parseConfig(configSchema, {
          HTTP_PORT: '0',
          DATABASE_URL: 'postgres://app:pw@127.0.0.1:5432/meridian',
          BILLING_GRPC_URL: '127.0.0.1:1',
          // 32 bytes, base64 (the app refuses to start without its key).
          WEBHOOK_SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
          ...tlsEnv,
        });
        const source = GrpcCredentialSource.fromConfig(config, silent, registry);
        return () => source.close();
      },
    );
    expect(reported).toBe(notAfter);
  });
});

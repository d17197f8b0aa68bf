import { Registry } from 'prom-client';
import { grpcChannelCredentials, grpcServerCredentials } from './grpc-tls';

/**
 * A plaintext server or channel (no TLS files: the local stack, a mesh doing TLS) still declares
 * the metrics its `report` names, with no series, so every metric the alerts read is in the
 * scrape (the stack e2e test checks the alerts' metrics against it).
 */
describe('gRPC credentials without TLS', () => {
  it.each([
    [
      'server',
      (registry: Registry) => grpcServerCredentials({ report: { tls: 'billing.v1', registry } }),
    ],
    [
      'client',
      (registry: Registry) => grpcChannelCredentials({ report: { tls: 'billing.v1', registry } }),
    ],
  ])('a %s declares grpc_tls_certificate_not_after_seconds and its reloads', async (_, make) => {
    const registry = new Registry();
    make(registry);
    const text = await registry.metrics();
    expect(text).toContain('# HELP grpc_tls_certificate_not_after_seconds ');
    expect(text).toContain('# HELP grpc_tls_reloads_total ');
    expect(text).not.toMatch(/^grpc_tls_certificate_not_after_seconds\{/m);
  });
});

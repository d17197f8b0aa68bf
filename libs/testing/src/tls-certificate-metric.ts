import { X509Certificate } from 'node:crypto';
import type { Registry } from 'prom-client';

/** The end of a PEM certificate's validity, in unix seconds (the gauge's unit). */
export function notAfterSeconds(certPem: string): number {
  return Math.floor(Date.parse(new X509Certificate(certPem).validTo) / 1_000);
}

/**
 * The value of `grpc_tls_certificate_not_after_seconds` for `tls` and `role` in a registry
 * (undefined without that series): what MeridianGrpcCertificateExpiring reads.
 */
export async function certificateNotAfterIn(
  registry: Registry,
  labels: { tls: string; role: 'server' | 'client' },
): Promise<number | undefined> {
  const metric = (await registry.getMetricsAsJSON()).find(
    (m) => m.name === 'grpc_tls_certificate_not_after_seconds',
  ) as { values: { labels: Record<string, unknown>; value: number }[] } | undefined;
  return metric?.values.find((v) => v.labels.tls === labels.tls && v.labels.role === labels.role)
    ?.value;
}

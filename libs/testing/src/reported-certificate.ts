import { Registry } from 'prom-client';
import { TestPki } from './test-pki';
import { certificateNotAfterIn, notAfterSeconds } from './tls-certificate-metric';

/** The GRPC_TLS_* variables of an app's config, naming a fresh CA and a certificate it issued. */
export interface GrpcTlsTestEnv {
  GRPC_TLS_CA_FILE: string;
  GRPC_TLS_CERT_FILE: string;
  GRPC_TLS_KEY_FILE: string;
}

/** Stops what `reportedCertificate`'s `start` started (closes a client, a server). */
export type StopReporting = () => unknown;

/**
 * What an app reports of a gRPC certificate it loads (MeridianGrpcCertificateExpiring's input):
 * a fresh CA (in a directory removed after) issues a certificate to `name` (for `names`, DNS
 * names and addresses); `start` builds what the app builds from those files, given as its
 * GRPC_TLS_* variables, with a registry of its own, and answers how to stop it. While it runs,
 * `grpc_tls_certificate_not_after_seconds` {tls, role} is read: `reported`, to be the
 * certificate's end of validity, `notAfter` (unix seconds).
 */
export async function reportedCertificate(
  of: { name: string; names?: string[]; tls: string; role: 'server' | 'client' },
  start: (env: GrpcTlsTestEnv, registry: Registry) => StopReporting | Promise<StopReporting>,
): Promise<{ reported: number | undefined; notAfter: number }> {
  const pki = new TestPki();
  try {
    const ca = await pki.ca();
    const id = await ca.issue(of.name, of.names);
    const registry = new Registry();
    const env = { GRPC_TLS_CA_FILE: ca.certFile, GRPC_TLS_CERT_FILE: id.certFile };
    const stop = await start({ ...env, GRPC_TLS_KEY_FILE: id.keyFile }, registry);
    try {
      const reported = await certificateNotAfterIn(registry, { tls: of.tls, role: of.role });
      return { reported, notAfter: notAfterSeconds(id.cert) };
    } finally {
      await stop();
    }
  } finally {
    pki.remove();
  }
}

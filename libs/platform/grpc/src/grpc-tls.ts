import { readFileSync } from 'node:fs';
import {
  credentials,
  ServerCredentials,
  type ChannelCredentials,
  type ChannelOptions,
} from '@grpc/grpc-js';

/**
 * TLS files of the internal gRPC (`grpcTlsOf(config)` of @meridian/platform-config, which
 * checks them at start). Paths, as Kubernetes mounts a Secret. ADR 0506.
 */
export interface GrpcTls {
  /** Client: the CA the server's certificate is verified with; server: the clients' CA. */
  caFile?: string;
  /** Server: its certificate (TLS on with the key); client: its certificate (mutual TLS). */
  certFile?: string;
  keyFile?: string;
  /** Server: refuse a client without a certificate of `caFile`. */
  requireClientCert?: boolean;
  /** Client: the name in the server's certificate, when not the host dialled. */
  serverName?: string;
}

const read = (path: string | undefined) => (path ? readFileSync(path) : null);

/** Whether a server serves TLS: a certificate and its key. */
export function serverUsesTls(tls: GrpcTls | undefined): boolean {
  return Boolean(tls?.certFile && tls.keyFile);
}

/** Whether a client dials TLS: a CA to verify the server with. */
export function clientUsesTls(tls: GrpcTls | undefined): boolean {
  return Boolean(tls?.caFile);
}

/** TLS (mutual with `requireClientCert`) with a certificate and key; plaintext without. */
export function grpcServerCredentials(tls: GrpcTls | undefined): ServerCredentials {
  if (!tls || !serverUsesTls(tls)) {
    if (tls?.requireClientCert)
      throw new Error('gRPC client authentication needs a server certificate and key');
    return ServerCredentials.createInsecure();
  }
  const ca = read(tls.caFile);
  if (tls.requireClientCert && !ca) throw new Error('gRPC client authentication needs a CA');
  return ServerCredentials.createSsl(
    ca,
    [{ cert_chain: read(tls.certFile)!, private_key: read(tls.keyFile)! }],
    tls.requireClientCert ?? false,
  );
}

/** TLS with the private CA (and the client's certificate, when given); plaintext without a CA. */
export function grpcChannelCredentials(tls: GrpcTls | undefined): ChannelCredentials {
  if (!tls || !clientUsesTls(tls)) return credentials.createInsecure();
  const certFile = tls.certFile && tls.keyFile ? tls.certFile : undefined;
  return credentials.createSsl(
    read(tls.caFile),
    certFile ? read(tls.keyFile) : null,
    certFile ? read(certFile) : null,
  );
}

/** Channel options for `serverName` (the certificate's name, and the :authority sent). */
export function grpcTlsChannelOptions(tls: GrpcTls | undefined): ChannelOptions {
  if (!tls?.serverName || !clientUsesTls(tls)) return {};
  return {
    'grpc.ssl_target_name_override': tls.serverName,
    'grpc.default_authority': tls.serverName,
  };
}

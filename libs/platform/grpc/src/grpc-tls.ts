import {
  credentials,
  experimental,
  ServerCredentials,
  type ChannelCredentials,
  type ChannelOptions,
} from '@grpc/grpc-js';
import { Counter, Gauge, type Registry } from 'prom-client';
import {
  TlsFilesProvider,
  type TlsReloadEvent,
  type TlsReloadListener,
} from './tls-files-provider';

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
  /**
   * How often the files are read again while in use (GRPC_TLS_REFRESH_SECONDS; default an
   * hour): a renewed certificate, key or CA is taken, a broken one refused (TlsFilesProvider).
   */
  refreshIntervalMs?: number;
  /** Told of every read that found the files changed (log, metric: `reportTlsReloads`). */
  onReload?: TlsReloadListener;
  /**
   * Report the reads with `reportTlsReloads` under this name (`billing.v1`, `bor`), the role
   * being the side that loads the files (`grpcServerCredentials`: server,
   * `grpcChannelCredentials`: client): `grpc_tls_certificate_not_after_seconds` {tls, role} for
   * the certificate, in the app's registry. Ignored when `onReload` is given.
   */
  report?: { tls: string; registry?: Registry; logger?: TlsReloadLogger };
}

/** The side of a connection whose certificate the files hold. */
export type TlsRole = 'server' | 'client';

/** GRPC_TLS_REFRESH_SECONDS's default, for callers that give no interval. */
export const DEFAULT_TLS_REFRESH_MS = 3_600_000;

/**
 * Every TLS file a server or channel uses is read here (a server's certificate, a client's), so
 * `report` covers each certificate an app loads.
 */
function providerOf(
  tls: GrpcTls,
  role: TlsRole,
  files: { caFile?: string; certFile?: string; keyFile?: string },
) {
  return new TlsFilesProvider(files, {
    refreshIntervalMs: tls.refreshIntervalMs ?? DEFAULT_TLS_REFRESH_MS,
    onReload:
      tls.onReload ?? (tls.report ? reportTlsReloads({ ...tls.report, role }) : defaultReloadLog),
  });
}

/**
 * Plaintext: the reported metrics are declared all the same, with no series, so a scrape names
 * every metric the alerts read whether or not this deployment runs TLS.
 */
function declareReported(tls: GrpcTls | undefined, role: TlsRole): void {
  if (tls?.report?.registry) reportTlsReloads({ ...tls.report, role });
}

/** Whether a server serves TLS: a certificate and its key. */
export function serverUsesTls(tls: GrpcTls | undefined): boolean {
  return Boolean(tls?.certFile && tls.keyFile);
}

/** Whether a client dials TLS: a CA to verify the server with. */
export function clientUsesTls(tls: GrpcTls | undefined): boolean {
  return Boolean(tls?.caFile);
}

/**
 * TLS (mutual with `requireClientCert`) with a certificate and key; plaintext without. The files
 * are read again every `refreshIntervalMs` while the server runs: new connections get a renewed
 * certificate (and a renewed CA checks their certificates); open ones keep theirs.
 */
export function grpcServerCredentials(tls: GrpcTls | undefined): ServerCredentials {
  if (!tls || !serverUsesTls(tls)) {
    if (tls?.requireClientCert)
      throw new Error('gRPC client authentication needs a server certificate and key');
    declareReported(tls, 'server');
    return ServerCredentials.createInsecure();
  }
  if (tls.requireClientCert && !tls.caFile)
    throw new Error('gRPC client authentication needs a CA');
  const provider = providerOf(tls, 'server', {
    certFile: tls.certFile,
    keyFile: tls.keyFile,
    caFile: tls.requireClientCert ? tls.caFile : undefined,
  });
  // grpc-js 1.14 declares (ca, identity) but hands its first argument to the server as the
  // identity and its second as the CA; one provider serves both, and null means no client check.
  return experimental.createCertificateProviderServerCredentials(
    provider,
    tls.requireClientCert ? provider : null,
    tls.requireClientCert ?? false,
  );
}

/**
 * TLS with the private CA (and the client's certificate, when given); plaintext without a CA.
 * The files are read again every `refreshIntervalMs`: a renewed CA or client certificate is used
 * for the next connection the channel makes.
 */
export function grpcChannelCredentials(tls: GrpcTls | undefined): ChannelCredentials {
  if (!tls || !clientUsesTls(tls)) {
    declareReported(tls, 'client');
    return credentials.createInsecure();
  }
  const identity = Boolean(tls.certFile && tls.keyFile);
  const provider = providerOf(tls, 'client', {
    caFile: tls.caFile,
    certFile: identity ? tls.certFile : undefined,
    keyFile: identity ? tls.keyFile : undefined,
  });
  return experimental.createCertificateProviderChannelCredentials(
    provider,
    identity ? provider : null,
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

/** A pino logger fits. */
export interface TlsReloadLogger {
  info(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

const RELOADS = 'grpc_tls_reloads_total';
const NOT_AFTER = 'grpc_tls_certificate_not_after_seconds';

/**
 * A reload listener that logs the files read at start and every changed read (a refused one as
 * an error naming why, the last good certificate kept) and, given a registry, counts them in
 * `grpc_tls_reloads_total` {tls, role, outcome} and sets `grpc_tls_certificate_not_after_seconds`
 * {tls, role}: the end of the certificate's validity (an alert before it passes catches a
 * renewal that never arrives). `tls` names the link (`billing.v1`, `bor`), `role` the side whose
 * certificate it is (`server`, or `client` for mutual TLS). Without a logger, a changed read is
 * one JSON line on stderr.
 */
export function reportTlsReloads(options: {
  tls: string;
  role: TlsRole;
  logger?: TlsReloadLogger;
  registry?: Registry;
}): TlsReloadListener {
  const reloads =
    options.registry &&
    metricOf(
      options.registry,
      RELOADS,
      (registers) =>
        new Counter({
          name: RELOADS,
          help: 'Reads of changed gRPC TLS files: loaded (served from now on) or rejected (the last good ones kept)',
          labelNames: ['tls', 'role', 'outcome'],
          registers,
        }),
    );
  const notAfter =
    options.registry &&
    metricOf(
      options.registry,
      NOT_AFTER,
      (registers) =>
        new Gauge({
          name: NOT_AFTER,
          help: 'End of validity of a gRPC TLS certificate in use: a server certificate, or a client one for mutual TLS (unix seconds)',
          labelNames: ['tls', 'role'],
          registers,
          // A multi-process replica (rpc-gateway) reports its earliest.
          aggregator: 'min',
        }),
    );
  const labels = { tls: options.tls, role: options.role };
  const setNotAfter = (iso?: string) => {
    if (iso) notAfter?.set(labels, Math.floor(Date.parse(iso) / 1_000));
  };
  const { logger } = options;
  return (event: TlsReloadEvent) => {
    setNotAfter(event.certificate?.notAfter);
    if (event.outcome !== 'initial') reloads?.inc({ ...labels, outcome: event.outcome });
    if (!logger) return defaultReloadLog(event);
    const fields = { ...labels, files: event.files, certificate: event.certificate };
    if (event.outcome === 'initial') return logger.info(fields, 'gRPC TLS files loaded');
    if (event.outcome === 'loaded')
      logger.info(fields, 'gRPC TLS files renewed: serving the new ones');
    else
      logger.error(
        { ...fields, problem: event.problem },
        'gRPC TLS files changed but refused: still serving the last good ones',
      );
  };
}

function metricOf<M>(registry: Registry, name: string, make: (registers: Registry[]) => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? make([registry]);
}

/** Without a listener of the app's: one JSON line on stderr per changed read. */
function defaultReloadLog(event: TlsReloadEvent): void {
  if (event.outcome === 'initial') return;
  process.stderr.write(`${JSON.stringify({ msg: 'gRPC TLS files changed', ...event })}\n`);
}

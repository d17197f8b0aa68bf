import { billingV1 } from '@meridian/contracts';
import { grpcTlsOf } from '@meridian/platform-config';
import type { Registry } from 'prom-client';
import { createGrpcClient, type GrpcClient } from './grpc-client';
import type { GrpcTls, TlsReloadLogger } from './grpc-tls';

/** The GRPC_TLS_* variables of an app's config (`grpcTlsOf`'s input). */
export type GrpcTlsConfig = Parameters<typeof grpcTlsOf>[0];

/** Where an app reports a gRPC link's certificate: the link's name, its logger and registry. */
export interface GrpcTlsReport {
  /** `billing.v1`, `bor`: the `tls` label. */
  tls: string;
  logger: TlsReloadLogger;
  registry: Registry;
}

/**
 * The GRPC_TLS_* files of an app's config, every read of them reported in the app's registry:
 * `grpc_tls_certificate_not_after_seconds` {tls, role} (MeridianGrpcCertificateExpiring) and
 * `grpc_tls_reloads_total`, the role being the side that loads them (a server's certificate, or
 * a client's for mutual TLS); in plaintext both are declared with no series (ADR 0506).
 */
export function reportedGrpcTlsOf(config: GrpcTlsConfig, report: GrpcTlsReport): GrpcTls {
  return { ...grpcTlsOf(config), report };
}

export type BillingGrpcClient = GrpcClient<(typeof billingV1.BillingService)['method']>;

/**
 * billing-ledger's billing.v1 as an app dials it: BILLING_GRPC_URL over its GRPC_TLS_* files, its
 * client certificate (mutual TLS) reported as
 * grpc_tls_certificate_not_after_seconds{tls="billing.v1",role="client"}; a call without a
 * timeout of its own fails after `timeoutMs`.
 */
export function billingGrpcClientOf(
  config: GrpcTlsConfig & { BILLING_GRPC_URL: string },
  report: Omit<GrpcTlsReport, 'tls'>,
  timeoutMs = 3_000,
): BillingGrpcClient {
  return createGrpcClient(billingV1.BillingService, config.BILLING_GRPC_URL, {
    tls: reportedGrpcTlsOf(config, { ...report, tls: 'billing.v1' }),
    defaultTimeoutMs: timeoutMs,
  });
}

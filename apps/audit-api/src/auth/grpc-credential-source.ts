import { billingV1 } from '@meridian/contracts';
import { grpcTlsOf } from '@meridian/platform-config';
import {
  createGrpcClient,
  type GrpcClient,
  type GrpcTls,
  type TlsReloadLogger,
} from '@meridian/platform-grpc';
import type { Registry } from 'prom-client';
import type { AppConfig } from '../config/config';
import type { ApiKeyPrincipal, CredentialSource } from './credential-source';

/** billing.v1 ResolveApiKey on billing-ledger. */
export class GrpcCredentialSource implements CredentialSource {
  private readonly client: GrpcClient<(typeof billingV1.BillingService)['method']>;

  /** `tls`: the GRPC_TLS_* files (`grpcTlsOf(config)`); plaintext without. */
  constructor(target: string, tls?: GrpcTls, timeoutMs = 3_000) {
    this.client = createGrpcClient(billingV1.BillingService, target, {
      tls,
      defaultTimeoutMs: timeoutMs,
    });
  }

  /**
   * As the app runs it: the config's BILLING_GRPC_URL and GRPC_TLS_* files, its client
   * certificate (mutual TLS) reported in the app's registry as
   * grpc_tls_certificate_not_after_seconds{tls="billing.v1",role="client"}.
   */
  static fromConfig(
    config: AppConfig,
    logger: TlsReloadLogger,
    registry: Registry,
  ): GrpcCredentialSource {
    return new GrpcCredentialSource(config.BILLING_GRPC_URL, {
      ...grpcTlsOf(config),
      report: { tls: 'billing.v1', logger, registry },
    });
  }

  async resolveApiKey(key: string): Promise<ApiKeyPrincipal | null> {
    const response = await this.client.resolveApiKey({ key });
    if (!response.found) return null;
    const quota = response.account?.caps?.audit;
    return {
      keyId: response.keyId,
      accountId: response.accountId,
      scopes: [...response.scopes],
      planId: response.planId || null,
      auditQuota:
        quota && quota.checksPerPeriod > 0n
          ? {
              checksPerDay: Number(quota.checksPerPeriod),
              requestsPerSecond: quota.requestsPerSecond || 1,
            }
          : undefined,
    };
  }

  close(): void {
    this.client.close();
  }
}

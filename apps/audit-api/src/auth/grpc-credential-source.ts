import {
  billingGrpcClientOf,
  type BillingGrpcClient,
  type TlsReloadLogger,
} from '@meridian/platform-grpc';
import type { Registry } from 'prom-client';
import type { AppConfig } from '../config/config';
import type { ApiKeyPrincipal, CredentialSource } from './credential-source';

/** billing.v1 ResolveApiKey on billing-ledger. */
export class GrpcCredentialSource implements CredentialSource {
  /** As the app runs it: `billingGrpcClientOf` (its client certificate in the app's registry). */
  static fromConfig(config: AppConfig, logger: TlsReloadLogger, registry: Registry) {
    return new GrpcCredentialSource(billingGrpcClientOf(config, { logger, registry }));
  }

  private constructor(private readonly client: BillingGrpcClient) {}

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

import { DynamicModule, Module } from '@nestjs/common';
import { natsSettingsOf } from '@meridian/platform-config';
import { reportedGrpcTlsOf } from '@meridian/platform-grpc';
import { MessagingModule } from '@meridian/platform-messaging';
import { ObservabilityModule } from '@meridian/platform-observability';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { APP_CONFIG } from './config/app-config.token';
import type { AppConfig } from './config/config';
import { BillingCredentialSource } from './credentials/billing-credential-source';
import { CREDENTIAL_SOURCE, type CredentialSource } from './credentials/credential-cache';
import { StaticCredentialSource } from './credentials/static-credential-source';
import { GatewayRuntime, REPLICA_LINK } from './gateway.runtime';
import type { ReplicaLink } from './replica/replica-link';

export const SERVICE = 'rpc-gateway';

export interface AppModuleOverrides {
  /** Replaces billing-ledger (tests of the relay alone). */
  credentialSource?: CredentialSource;
  /** Set in a worker process of a multi-process replica (ADR 0204). */
  replica?: ReplicaLink;
}

/** The credential source as the app runs it (exported for its test). */
export function credentialSourceOf(
  config: AppConfig,
  logger: Logger,
  registry: Registry,
): CredentialSource {
  if (config.STATIC_ACCESS_TOKENS) return new StaticCredentialSource(config.STATIC_ACCESS_TOKENS);
  // Its client certificate (mutual TLS) in grpc_tls_certificate_not_after_seconds{role="client"}.
  return new BillingCredentialSource(
    config.BILLING_GRPC_URL,
    reportedGrpcTlsOf(config, { tls: 'billing.v1', logger, registry }),
  );
}

@Module({})
export class AppModule {
  static forRoot(
    config: AppConfig,
    logger: Logger,
    overrides: AppModuleOverrides = {},
  ): DynamicModule {
    return {
      module: AppModule,
      global: true,
      imports: [
        ObservabilityModule.forRoot({
          service: SERVICE,
          logger,
          // A worker answers /metrics for the whole replica: the primary aggregates every process.
          metricsText: overrides.replica && (() => overrides.replica!.request('metrics', {})),
        }),
        MessagingModule.forRoot({
          connection: natsSettingsOf(config),
          prefix: config.NATS_PREFIX,
          name: SERVICE,
          // NATS trouble degrades the gateway (nats_connected), it does not stop it serving:
          // not part of /readyz (ADR 0212). Probed as often as the upstreams.
          probe: { intervalMs: config.HEALTH_INTERVAL_MS, timeoutMs: config.HEALTH_TIMEOUT_MS },
        }),
      ],
      providers: [
        { provide: APP_CONFIG, useValue: config },
        {
          provide: CREDENTIAL_SOURCE,
          inject: [Registry],
          useFactory: (registry: Registry) =>
            overrides.credentialSource ?? credentialSourceOf(config, logger, registry),
        },
        { provide: REPLICA_LINK, useValue: overrides.replica ?? null },
        GatewayRuntime,
      ],
      exports: [APP_CONFIG, GatewayRuntime],
    };
  }
}

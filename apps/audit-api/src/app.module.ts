import { DynamicModule, Module } from '@nestjs/common';
import { natsSettingsOf } from '@meridian/platform-config';
import { DbModule } from '@meridian/platform-db';
import { JetStreamConsumers, MessagingModule } from '@meridian/platform-messaging';
import { ObservabilityModule } from '@meridian/platform-observability';
import { openApiController } from '@meridian/platform-http/openapi';
import { systemClock, type Clock } from '@meridian/time';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { AuthService } from './auth/auth.service';
import { CachedCredentialSource } from './auth/cached-credential-source';
import { AUDIT_SCOPE, CREDENTIAL_SOURCE, type CredentialSource } from './auth/credential-source';
import { GrpcCredentialSource } from './auth/grpc-credential-source';
import { AuditErrorFilter } from './common/audit-error.filter';
import { CLOCK } from './common/clock.token';
import { APP_CONFIG } from './config/app-config.token';
import type { AppConfig } from './config/config';
import { dataSourceOptions } from './db/data-source';
import { CHAIN_CLIENTS, UrlChainClients, type ChainClients } from './evidence/chain-clients';
import { ChainUrlCheck } from './evidence/chain-url-check';
import { LabelsReadiness } from './labels/labels-readiness';
import { LabelsRepository } from './labels/labels.repository';
import { QuotaController } from './quota/quota.controller';
import { QuotaService } from './quota/quota.service';
import { AddressRecordsRepository } from './records/address-records.repository';
import { CheckRunner } from './records/check-runner.service';
import { VerdictCacheRepository } from './records/verdict-cache.repository';
import { HoneypotTokensRepository } from './records/honeypot-tokens.repository';
import { RugPullController } from './rug-pull/rug-pull.controller';
import { RugPullService } from './rug-pull/rug-pull.service';
import { WalletAssessor } from './wallet/wallet-assessor.service';
import { WalletAuditController } from './wallet/wallet-audit.controller';
import { WalletAuditService } from './wallet/wallet-audit.service';

export const SERVICE = 'audit-api';

/** Every REST controller; /openapi.json describes exactly these (openapi.spec.ts). */
export const REST_CONTROLLERS = [WalletAuditController, RugPullController, QuotaController];

/** Ports a test (or another deployment) may replace: where keys, chain reads and time come from. */
export interface AuditOverrides {
  credentials?: CredentialSource;
  chains?: ChainClients;
  clock?: Clock;
}

@Module({})
export class AppModule {
  static forRoot(config: AppConfig, logger: Logger, overrides: AuditOverrides = {}): DynamicModule {
    const clock = overrides.clock ?? systemClock;
    return {
      module: AppModule,
      global: true,
      imports: [
        ObservabilityModule.forRoot({ service: SERVICE, logger }),
        DbModule.forApp(dataSourceOptions(config.DATABASE_URL)),
        MessagingModule.forRoot({
          connection: natsSettingsOf(config),
          prefix: config.NATS_PREFIX,
          name: SERVICE,
        }),
      ],
      controllers: [
        ...REST_CONTROLLERS,
        openApiController(
          { title: 'Meridian address audit API', version: 'v1' },
          REST_CONTROLLERS,
          { apiKeyScope: AUDIT_SCOPE, database: true },
        ),
      ],
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: CLOCK, useValue: clock },
        {
          provide: CREDENTIAL_SOURCE,
          inject: [JetStreamConsumers, Registry],
          useFactory: (consumers: JetStreamConsumers, registry: Registry) =>
            new CachedCredentialSource(
              overrides.credentials ?? GrpcCredentialSource.fromConfig(config, logger, registry),
              clock,
              config.AUDIT_KEY_CACHE_TTL_MS,
            )
              .watch(consumers)
              .count(registry),
        },
        {
          provide: CHAIN_CLIENTS,
          useFactory: () =>
            overrides.chains ??
            new UrlChainClients(
              config.AUDIT_RPC_URLS,
              config.AUDIT_RPC_URL,
              config.AUDIT_RPC_TIMEOUT_MS,
            ),
        },
        // A token-less chain URL warned of at start (not with test doubles for the chains).
        ...(overrides.chains ? [] : [ChainUrlCheck]),
        AuditErrorFilter,
        AuthService,
        QuotaService,
        LabelsRepository,
        LabelsReadiness,
        AddressRecordsRepository,
        VerdictCacheRepository,
        HoneypotTokensRepository,
        CheckRunner,
        WalletAssessor,
        WalletAuditService,
        RugPullService,
      ],
      exports: [APP_CONFIG],
    };
  }
}

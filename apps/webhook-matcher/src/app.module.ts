import { DynamicModule, Module } from '@nestjs/common';
import { processClock, natsSettingsOf } from '@meridian/platform-config';
import { DbJobGate, DbModule } from '@meridian/platform-db';
import { JetStreamConsumers, MessagingModule } from '@meridian/platform-messaging';
import { undeclaredQueryProviders } from '@meridian/platform-http';
import { ObservabilityModule } from '@meridian/platform-observability';
import type { Clock } from '@meridian/time';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { matcherOpenApiController } from './http/openapi';
import { testDeliveryLimits } from './webhooks/test-delivery-limits';
import { AccountChangesConsumer } from './account-changes/account-changes.consumer';
import { AccountWrites } from './accounts/account-writes';
import { AccountsRepository } from './accounts/accounts.repository';
import { AdminWebhooksController } from './admin/admin-webhooks.controller';
import { OperatorGuard } from './admin/operator.guard';
import { AddressListsController } from './address-lists/address-lists.controller';
import { AddressListsRepository } from './address-lists/address-lists.repository';
import { AddressListsService } from './address-lists/address-lists.service';
import { ApiKeyGuard } from './auth/api-key.guard';
import { CachedCredentialSource } from './auth/cached-credential-source';
import { CREDENTIAL_SOURCE, WEBHOOKS_SCOPE, type CredentialSource } from './auth/credential-source';
import { GrpcCredentialSource } from './auth/grpc-credential-source';
import { CLOCK } from './common/clock.token';
import { APP_CONFIG } from './config/app-config.token';
import { DeliveryRoutes } from './delivery-jobs/delivery-routes';
import type { AppConfig } from './config/config';
import { dataSourceOptions } from './db/data-source';
import { DeliveriesController } from './deliveries/deliveries.controller';
import { DeliveriesRepository } from './deliveries/deliveries.repository';
import { RecordStatsRepository } from './webhooks/record-stats.repository';
import { RecordUsageRepository } from './webhooks/record-usage';
import { DeliveryHealthConsumer } from './deliveries/delivery-health.consumer';
import { DeliveryLogRetention } from './deliveries/delivery-log-retention.service';
import { ChangeLogRetention } from './status/change-log-retention.service';
import { ReplayService } from './deliveries/replay.service';
import { LimitsController } from './limits/limits.controller';
import { MatchingService } from './matching/matching.service';
import { StatusHistoryRepository } from './status/status-history.repository';
import { StatusPublisher } from './status/status-publisher.service';
import { ServiceDecisionSweep } from './status/service-decision-sweep.service';
import { StatusService } from './status/status.service';
import { WebhooksController } from './webhooks/webhooks.controller';
import { WebhooksRepository } from './webhooks/webhooks.repository';
import { WebhooksService } from './webhooks/webhooks.service';

export const SERVICE = 'webhook-matcher';

/** What a test (or another deployment) may replace: where time comes from. */
export interface MatcherOverrides {
  clock?: Clock;
  credentials?: CredentialSource;
}

/** Every REST controller (limits before :id routes); /openapi.json describes exactly these. */
export const REST_CONTROLLERS = [
  LimitsController,
  WebhooksController,
  DeliveriesController,
  AddressListsController,
  AdminWebhooksController,
];

@Module({})
export class AppModule {
  static forRoot(
    config: AppConfig,
    logger: Logger,
    overrides: MatcherOverrides = {},
  ): DynamicModule {
    const clock = overrides.clock ?? processClock(config);
    return {
      module: AppModule,
      global: true,
      imports: [
        ObservabilityModule.forRoot({ service: SERVICE, logger }),
        DbModule.forApp(
          dataSourceOptions(config.DATABASE_URL, {
            poolSize: config.DATABASE_POOL_SIZE,
            acquireTimeoutMs: config.DATABASE_ACQUIRE_TIMEOUT_MS,
          }),
        ),
        MessagingModule.forRoot({
          connection: natsSettingsOf(config),
          prefix: config.NATS_PREFIX,
          name: SERVICE,
          // A handler failing while Postgres is out of reach holds its message (ADR 0504).
          gates: [DbJobGate],
        }),
      ],
      // Limits first: its static path sits beside /webhooks/:id.
      controllers: [
        ...REST_CONTROLLERS,
        matcherOpenApiController(
          { title: 'Meridian webhooks API', version: 'v1' },
          REST_CONTROLLERS,
          { apiKeyScope: WEBHOOKS_SCOPE, database: true },
          testDeliveryLimits(config),
        ),
      ],
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: CLOCK, useValue: clock },
        ...undeclaredQueryProviders(),
        {
          provide: CREDENTIAL_SOURCE,
          inject: [JetStreamConsumers, Registry],
          useFactory: (consumers: JetStreamConsumers, registry: Registry) =>
            new CachedCredentialSource(
              overrides.credentials ?? GrpcCredentialSource.fromConfig(config, logger, registry),
              clock,
              config.WEBHOOK_KEY_CACHE_TTL_MS,
            )
              .watch(consumers)
              .count(registry),
        },
        ApiKeyGuard,
        OperatorGuard,
        AccountsRepository,
        AccountWrites,
        WebhooksRepository,
        AddressListsRepository,
        StatusHistoryRepository,
        StatusPublisher,
        StatusService,
        WebhooksService,
        AddressListsService,
        AccountChangesConsumer,
        DeliveryRoutes,
        MatchingService,
        DeliveriesRepository,
        RecordStatsRepository,
        RecordUsageRepository,
        ReplayService,
        DeliveryLogRetention,
        ChangeLogRetention,
        DeliveryHealthConsumer,
        ServiceDecisionSweep,
      ],
      exports: [
        APP_CONFIG,
        CLOCK,
        StatusService,
        WebhooksRepository,
        AddressListsRepository,
        StatusPublisher,
      ],
    };
  }
}

import { DynamicModule, Module } from '@nestjs/common';
import { processClock, natsSettingsOf } from '@meridian/platform-config';
import { DbJobGate, DbModule } from '@meridian/platform-db';
import { MessagingModule } from '@meridian/platform-messaging';
import { ObservabilityModule } from '@meridian/platform-observability';
import type { Logger } from 'pino';
import { APP_CONFIG } from './config/app-config.token';
import type { AppConfig } from './config/config';
import { dataSourceOptions } from './db/data-source';
import { DeliveryRuntime, WORKER_OPTIONS, type WorkerOptions } from './delivery.runtime';
import { dnsServersResolver } from './sending/dns-servers-resolver';

export const SERVICE = 'delivery-worker';

@Module({})
export class AppModule {
  static forRoot(
    config: AppConfig,
    logger: Logger,
    options: Partial<WorkerOptions> = {},
  ): DynamicModule {
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
          // A handler failing while Postgres is out of reach holds its message (ADR 0504).
          gates: [DbJobGate],
        }),
      ],
      providers: [
        { provide: APP_CONFIG, useValue: config },
        {
          provide: WORKER_OPTIONS,
          useValue: workerOptions(config, options),
        },
        DeliveryRuntime,
      ],
      exports: [APP_CONFIG],
    };
  }
}

/** The config's clock and resolver, unless a test or the bench gives its own. */
function workerOptions(config: AppConfig, options: Partial<WorkerOptions>): WorkerOptions {
  const resolver =
    options.resolver ??
    (config.DELIVERY_DNS_SERVERS ? dnsServersResolver(config.DELIVERY_DNS_SERVERS) : undefined);
  return {
    ...options,
    clock: options.clock ?? processClock(config),
    ...(resolver ? { resolver } : {}),
  };
}

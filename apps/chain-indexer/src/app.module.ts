import { DynamicModule, Module } from '@nestjs/common';
import { natsSettingsOf } from '@meridian/platform-config';
import { DbJobGate, DbModule } from '@meridian/platform-db';
import { MessagingModule } from '@meridian/platform-messaging';
import { ObservabilityModule } from '@meridian/platform-observability';
import type { Logger } from 'pino';
import { APP_CONFIG } from './config/app-config.token';
import type { AppConfig } from './config/config';
import { dataSourceOptions } from './db/data-source';
import { clockProvider, IndexerService } from './heads/indexer.service';

export const SERVICE = 'chain-indexer';

@Module({})
export class AppModule {
  static forRoot(config: AppConfig, logger: Logger): DynamicModule {
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
      providers: [{ provide: APP_CONFIG, useValue: config }, clockProvider, IndexerService],
      exports: [APP_CONFIG],
    };
  }
}

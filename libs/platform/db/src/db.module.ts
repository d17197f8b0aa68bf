import {
  DynamicModule,
  Global,
  Inject,
  Module,
  OnApplicationShutdown,
  OnModuleInit,
} from '@nestjs/common';
import { ReadinessRegistry } from '@meridian/platform-observability';
import { DataSource } from 'typeorm';
import { checkSchemaReady, createAppDataSource, type AppDataSourceOptions } from './data-source';
import { initializeDataSource } from './pg-errors';

const DB_OPTIONS = Symbol('DB_OPTIONS');

/** Provides the app's DataSource (inject `DataSource`) and a `postgres` readiness check. */
@Global()
@Module({})
export class DbModule implements OnModuleInit, OnApplicationShutdown {
  constructor(
    private readonly dataSource: DataSource,
    private readonly readiness: ReadinessRegistry,
    @Inject(DB_OPTIONS) private readonly options: AppDataSourceOptions,
  ) {}

  static forApp(options: AppDataSourceOptions): DynamicModule {
    return {
      module: DbModule,
      providers: [
        { provide: DB_OPTIONS, useValue: options },
        {
          provide: DataSource,
          useFactory: async () => {
            const dataSource = createAppDataSource(options);
            // Lazy: the app starts (and /healthz answers) even while Postgres is down;
            // /readyz reports it until it comes back.
            await dataSource.initialize().catch(() => undefined);
            return dataSource;
          },
        },
      ],
      exports: [DataSource],
    };
  }

  onModuleInit(): void {
    this.readiness.register('postgres', async () => {
      // A TLS failure reads "Postgres TLS: …" on /readyz, saying what to fix.
      if (!this.dataSource.isInitialized) await initializeDataSource(this.dataSource);
      await checkSchemaReady(this.dataSource, this.options.schema);
    });
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
  }
}

import {
  DynamicModule,
  Global,
  Inject,
  Module,
  OnApplicationShutdown,
  OnModuleInit,
} from '@nestjs/common';
import { LOGGER, ReadinessRegistry } from '@meridian/platform-observability';
import type { Logger } from 'pino';
import { DataSource } from 'typeorm';
import { ConnectFailureLog } from './connect-log';
import { checkSchemaReady, createAppDataSource, type AppDataSourceOptions } from './data-source';
import { DbJobGate } from './db-job-gate';
import { initializeDataSource } from './pg-errors';

const DB_OPTIONS = Symbol('DB_OPTIONS');
const CONNECT_LOG = Symbol('CONNECT_LOG');

/**
 * Provides the app's DataSource (inject `DataSource`), the gate its periodic jobs ask before they
 * query (inject `DbJobGate`) and a `postgres` readiness check.
 */
@Global()
@Module({})
export class DbModule implements OnModuleInit, OnApplicationShutdown {
  constructor(
    private readonly dataSource: DataSource,
    private readonly readiness: ReadinessRegistry,
    @Inject(DB_OPTIONS) private readonly options: AppDataSourceOptions,
    @Inject(CONNECT_LOG) private readonly connectLog: ConnectFailureLog,
    private readonly gate: DbJobGate,
  ) {}

  static forApp(options: AppDataSourceOptions): DynamicModule {
    return {
      module: DbModule,
      providers: [
        { provide: DB_OPTIONS, useValue: options },
        {
          // The cause of a failed connection, logged once per distinct cause (redacted URL).
          provide: CONNECT_LOG,
          useFactory: (logger: Logger) => new ConnectFailureLog(logger, options.url),
          inject: [LOGGER],
        },
        {
          provide: DataSource,
          useFactory: async (connectLog: ConnectFailureLog) => {
            const dataSource = createAppDataSource(options);
            // Lazy: the app starts (and /healthz answers) even while Postgres is down;
            // /readyz reports it until it comes back, and the log says why.
            await initializeDataSource(dataSource).then(
              () => connectLog.connected(),
              (error: unknown) => connectLog.failed(error),
            );
            return dataSource;
          },
          inject: [CONNECT_LOG],
        },
        {
          // A lost connection is logged once when it is noticed and once when it answers again.
          provide: DbJobGate,
          useFactory: (dataSource: DataSource, connectLog: ConnectFailureLog) =>
            DbJobGate.of(dataSource).configure({ log: connectLog }),
          inject: [DataSource, CONNECT_LOG],
        },
      ],
      exports: [DataSource, DbJobGate],
    };
  }

  onModuleInit(): void {
    this.readiness.register('postgres', async () => {
      // A TLS failure reads "Postgres TLS: …" on /readyz, saying what to fix.
      if (!this.dataSource.isInitialized) {
        try {
          await initializeDataSource(this.dataSource);
        } catch (error) {
          this.connectLog.failed(error);
          throw error;
        }
        this.connectLog.connected();
        this.gate.connected();
      }
      await checkSchemaReady(this.dataSource, this.options.schema);
    });
  }

  async onApplicationShutdown(): Promise<void> {
    this.gate.stop();
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
  }
}

import { DynamicModule, Module } from '@nestjs/common';
import { natsSettingsOf } from '@meridian/platform-config';
import { DbJobGate, DbModule } from '@meridian/platform-db';
import { undeclaredQueryProviders } from '@meridian/platform-http';
import { openApiController } from '@meridian/platform-http/openapi';
import { MessagingModule } from '@meridian/platform-messaging';
import { ObservabilityModule } from '@meridian/platform-observability';
import { systemClock, type Clock } from '@meridian/time';
import type { Logger } from 'pino';
import { AccountController } from './accounts/account.controller';
import { AccountWrites } from './accounts/account-writes';
import { AccountsService } from './accounts/accounts.service';
import { AccountRequestsRepository } from './accounts/account-requests.repository';
import { AccountsRepository } from './accounts/accounts.repository';
import { AdminController } from './accounts/admin.controller';
import { CLOCK } from './clock/clock.token';
import { APP_CONFIG } from './config/app-config.token';
import { PublishedMarks } from './state/published-marks';
import type { AppConfig } from './config/config';
import { AccessTokensController } from './credentials/access-tokens.controller';
import { ApiKeysController } from './credentials/api-keys.controller';
import { CredentialsRepository } from './credentials/credentials.repository';
import { CredentialsService } from './credentials/credentials.service';
import { RevocationReplay } from './credentials/revocation-replay';
import { IdempotencyKeys } from './idempotency/idempotency-keys.service';
import { IdempotencyKeysRepository } from './idempotency/idempotency-keys.repository';
import { dataSourceOptions } from './db/data-source';
import { BillingGrpcServer } from './grpc/billing.grpc';
import { AccountKeyGuard, OperatorGuard } from './http/auth.guards';
import { ChangeSignal } from './ledger/change-signal';
import { LedgerTicker } from './ledger/ledger-ticker.service';
import { UsageJournalRetention } from './ledger/usage-journal-retention';
import { LedgerRepository } from './ledger/ledger.repository';
import { LedgerService } from './ledger/ledger.service';
import { TopUpsController } from './ledger/top-ups.controller';
import { TopUpsRepository } from './ledger/top-ups.repository';
import { OutboxRetention } from './outbox/outbox-retention';
import { OutboxRepository } from './outbox/outbox.repository';
import { processPassTimers, STATE_PASS_TIMERS, type PassTimers } from './state/pass-throttle';
import { StatePublisher } from './state/state-publisher.service';
import { StateRepository } from './state/state.repository';
import { PartitionTakeover } from './usage/partition-takeover.service';
import { UnreadUsageWatch } from './usage/unread-usage.service';
import { UsageConsumer } from './usage/usage.consumer';
import { HourlyFolder } from './usage/hourly-folder.service';
import { UsageFlushesRepository } from './usage/usage-flushes.repository';

export const SERVICE = 'billing-ledger';

export interface AppOptions {
  /** Defaults to the system clock; tests pass a FakeClock. */
  clock?: Clock;
  /** Tests: every consumer's redelivery backoff (MessagingOptions.consumerBackoffMs). */
  consumerBackoffMs?: readonly number[];
  /**
   * Tests: the timers of the balance-state publisher's usage passes (`PassThrottle`), to hold
   * the end of its interval; the process's by default.
   */
  statePassTimers?: PassTimers;
}

/** Every REST controller; /openapi.json describes exactly these (openapi.spec.ts). */
/** The document's options: AccountKeyGuard's scope; every route reads Postgres (503). */
export const OPENAPI_OPTIONS = { apiKeyScope: 'account', database: true } as const;

export const REST_CONTROLLERS = [
  AccountController,
  AdminController,
  ApiKeysController,
  AccessTokensController,
  TopUpsController,
];

@Module({})
export class AppModule {
  static forRoot(config: AppConfig, logger: Logger, options: AppOptions = {}): DynamicModule {
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
          consumerBackoffMs: options.consumerBackoffMs,
        }),
      ],
      controllers: [
        ...REST_CONTROLLERS,
        openApiController(
          { title: 'Meridian account and operator API', version: 'v1' },
          REST_CONTROLLERS,
          OPENAPI_OPTIONS,
        ),
      ],
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: CLOCK, useValue: options.clock ?? systemClock },
        { provide: STATE_PASS_TIMERS, useValue: options.statePassTimers ?? processPassTimers },
        // A route whose @ApiRoute declares no query takes none: 400 invalid_query (QA YY).
        ...undeclaredQueryProviders(),
        ChangeSignal,
        PublishedMarks,
        LedgerRepository,
        AccountWrites,
        AccountsRepository,
        AccountRequestsRepository,
        TopUpsRepository,
        OutboxRepository,
        StateRepository,
        UsageFlushesRepository,
        CredentialsRepository,
        IdempotencyKeysRepository,
        IdempotencyKeys,
        LedgerService,
        CredentialsService,
        RevocationReplay,
        AccountsService,
        StatePublisher,
        LedgerTicker,
        UsageJournalRetention,
        OutboxRetention,
        HourlyFolder,
        UsageConsumer,
        UnreadUsageWatch,
        PartitionTakeover,
        BillingGrpcServer,
        AccountKeyGuard,
        OperatorGuard,
      ],
      exports: [APP_CONFIG, CLOCK],
    };
  }
}

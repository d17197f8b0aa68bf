import { DynamicModule, Inject, Module, OnApplicationBootstrap } from '@nestjs/common';
import { DbModule } from '@meridian/platform-db';
import { LOGGER, ObservabilityModule } from '@meridian/platform-observability';
import { systemClock, type Clock } from '@meridian/time';
import type { Logger } from 'pino';
import { AuthController } from './auth/auth.controller';
import { SignInLocksController } from './auth/sign-in-locks.controller';
import { AuthService } from './auth/auth.service';
import { LoginFailuresRepository } from './auth/login-failures.repository';
import { SessionsRetention } from './auth/sessions-retention';
import { SessionsRepository } from './auth/sessions.repository';
import { UsersRepository } from './auth/users.repository';
import { SignUpRequestsRepository } from './auth/sign-up-requests.repository';
import { CLOCK } from './clock.token';
import { APP_CONFIG } from './config/app-config.token';
import type { AppConfig } from './config/config';
import { AccountKeyService } from './customer/account-key.service';
import { CustomerController } from './customer/customer.controller';
import { dataSourceOptions } from './db/data-source';
import { OperatorController } from './operator/operator.controller';
import { TeamController } from './team/team.controller';
import { TeamService } from './team/team.service';
import { AccountSecrets } from './secrets/account-secrets';
import { SealedKeysGauge } from './secrets/sealed-keys-gauge';
import { TokenChangesRepository } from './team/token-changes.repository';
import { SealedKeysRepository } from './secrets/sealed-keys.repository';
import { InvitationsRepository } from './settings/invitations.repository';
import { SettingsRepository } from './settings/settings.repository';
import { SignupModeService } from './settings/signup-mode.service';
import { ManagedKeys } from './upstream/managed-keys';
import { UpstreamClient } from './upstream/upstream.client';

export const SERVICE = 'dashboard';

@Module({})
export class AppModule implements OnApplicationBootstrap {
  constructor(
    private readonly auth: AuthService,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  static forRoot(
    config: AppConfig,
    logger: Logger,
    overrides: { clock?: Clock } = {},
  ): DynamicModule {
    return {
      module: AppModule,
      global: true,
      imports: [
        ObservabilityModule.forRoot({ service: SERVICE, logger }),
        DbModule.forApp(dataSourceOptions(config.DATABASE_URL)),
      ],
      controllers: [
        AuthController,
        CustomerController,
        OperatorController,
        TeamController,
        SignInLocksController,
      ],
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: CLOCK, useValue: overrides.clock ?? systemClock },
        UsersRepository,
        SignUpRequestsRepository,
        SessionsRepository,
        SessionsRetention,
        LoginFailuresRepository,
        SettingsRepository,
        InvitationsRepository,
        SignupModeService,
        UpstreamClient,
        ManagedKeys,
        AccountSecrets,
        SealedKeysRepository,
        SealedKeysGauge,
        AccountKeyService,
        AuthService,
        TeamService,
        TokenChangesRepository,
      ],
      exports: [APP_CONFIG],
    };
  }

  /** The configured operator exists from the first start; a database not yet up only delays it. */
  async onApplicationBootstrap(): Promise<void> {
    await this.auth.ensureOperator().catch((error: unknown) => {
      this.logger.error({ err: error }, 'could not create the configured operator');
    });
  }
}

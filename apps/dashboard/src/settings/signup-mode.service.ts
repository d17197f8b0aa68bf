import { Inject, Injectable } from '@nestjs/common';
import type { Clock } from '@meridian/time';
import { CLOCK } from '../clock.token';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import { SettingsRepository } from './settings.repository';

export type SignupMode = 'open' | 'invite';

/** Open sign-up or invitation only: config gives the default, an operator's choice wins. */
@Injectable()
export class SignupModeService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly settings: SettingsRepository,
  ) {}

  async mode(): Promise<SignupMode> {
    const stored = await this.settings.get('signup_mode');
    return stored === 'open' || stored === 'invite' ? stored : this.config.SIGNUP_MODE;
  }

  async set(mode: SignupMode): Promise<void> {
    await this.settings.set('signup_mode', mode, this.clock.now());
  }
}

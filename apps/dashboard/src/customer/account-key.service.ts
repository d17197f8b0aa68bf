import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@meridian/errors';
import { openSecret } from '@meridian/webhooks';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import type { UserRow } from '../auth/users.repository';

/** Opens the sealed API key of a user's account, for server-side calls only. */
@Injectable()
export class AccountKeyService {
  private readonly key: Buffer;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.key = Buffer.from(config.DASHBOARD_SECRETS_KEY, 'base64');
  }

  keyOf(user: UserRow): string {
    if (!user.sealedApiKey)
      throw new DomainError('no_account', 'forbidden', 'this user has no billing account');
    return openSecret(this.key, user.sealedApiKey);
  }
}

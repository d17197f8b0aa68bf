import { Injectable } from '@nestjs/common';
import { DomainError } from '@meridian/errors';
import type { UserRow } from '../auth/users.repository';
import { AccountSecrets } from '../secrets/account-secrets';

/** Opens the sealed API key of a user's account, for server-side calls only. */
@Injectable()
export class AccountKeyService {
  constructor(private readonly secrets: AccountSecrets) {}

  keyOf(user: UserRow): string {
    if (!user.sealedApiKey)
      throw new DomainError('no_account', 'forbidden', 'this user has no billing account');
    return this.secrets.open(user.id, user.sealedApiKey);
  }
}

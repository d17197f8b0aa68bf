import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@meridian/errors';
import { authorizationOf } from '@meridian/platform-http';
import {
  AUDIT_SCOPE,
  CREDENTIAL_SOURCE,
  type ApiKeyPrincipal,
  type CredentialSource,
} from './credential-source';

@Injectable()
export class AuthService {
  constructor(@Inject(CREDENTIAL_SOURCE) private readonly credentials: CredentialSource) {}

  /** `Authorization: Bearer <API_KEY>` → principal with the audit scope, or 401/403. */
  async authenticate(header: string | undefined): Promise<ApiKeyPrincipal> {
    const sent = authorizationOf(header);
    if (sent.kind === 'absent')
      throw new DomainError(
        'missing_api_key',
        'unauthenticated',
        'send Authorization: Bearer <API_KEY>',
      );
    // A header was sent (Basic, a value too long…): a bad key, not a missing one (QA F5).
    if (sent.kind === 'unusable')
      throw new DomainError(
        'invalid_api_key',
        'unauthenticated',
        'the Authorization scheme must be Bearer: send Authorization: Bearer <API_KEY> ' +
          '(one key of at most 512 characters)',
      );
    const key = sent.credential;
    let principal: ApiKeyPrincipal | null;
    try {
      principal = await this.credentials.resolveApiKey(key);
    } catch (cause) {
      throw new DomainError(
        'credentials_unavailable',
        'unavailable',
        'credentials cannot be checked right now; try again',
        { cause },
      );
    }
    if (!principal)
      throw new DomainError('invalid_api_key', 'unauthenticated', 'unknown or revoked API key');
    if (!principal.scopes.includes(AUDIT_SCOPE))
      throw new DomainError(
        'audit_scope_required',
        'forbidden',
        'this API key has no access to the address audit API',
      );
    return principal;
  }
}

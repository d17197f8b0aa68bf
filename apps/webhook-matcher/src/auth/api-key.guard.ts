import {
  CanActivate,
  createParamDecorator,
  ExecutionContext,
  Inject,
  Injectable,
} from '@nestjs/common';
import { DomainError } from '@meridian/errors';
import { bearerOf, causeLoggedOnce } from '@meridian/platform-http';
import type { FastifyRequest } from 'fastify';
import { CREDENTIAL_SOURCE, WEBHOOKS_SCOPE, type CredentialSource } from './credential-source';

interface AuthenticatedRequest extends FastifyRequest {
  accountId?: string;
}

const unauthorized = () =>
  new DomainError('unauthorized', 'unauthenticated', 'missing or invalid API key');

/** `Authorization: Bearer <API key>` of billing-ledger with the `webhooks` scope. */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(@Inject(CREDENTIAL_SOURCE) private readonly credentials: CredentialSource) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const key = bearerOf(request.headers.authorization);
    if (key === undefined) throw unauthorized();
    let principal;
    try {
      principal = await this.credentials.resolveApiKey(key);
    } catch (cause) {
      // Its cause is logged once per outage by the source (GrpcCredentialSource), not per request.
      throw causeLoggedOnce(
        new DomainError(
          'credentials_unavailable',
          'unavailable',
          'credentials cannot be checked right now; try again',
          { cause },
        ),
      );
    }
    if (!principal) throw unauthorized();
    if (!principal.scopes.includes(WEBHOOKS_SCOPE))
      throw new DomainError(
        'insufficient_scope',
        'forbidden',
        'this API key has no webhooks scope',
      );
    request.accountId = principal.accountId;
    return true;
  }
}

/** The account of the API key that authenticated the request. */
export const AccountId = createParamDecorator((_: unknown, context: ExecutionContext): string => {
  const accountId = context.switchToHttp().getRequest<AuthenticatedRequest>().accountId;
  if (!accountId) throw unauthorized();
  return accountId;
});

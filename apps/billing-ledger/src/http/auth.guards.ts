import {
  CanActivate,
  createParamDecorator,
  ExecutionContext,
  Inject,
  Injectable,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { DomainError } from '@meridian/errors';
import { bearerOf, SharedSecrets } from '@meridian/platform-http';
import { RequiresScope as routeScope, ROUTE_SCOPE } from '@meridian/platform-http/openapi';
import type { FastifyRequest } from 'fastify';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import type { ApiKeyRow } from '../credentials/credentials.repository';
import { CredentialsService } from '../credentials/credentials.service';
import { API_KEY_SCOPE_WORDS, type ApiKeyScope } from '../credentials/scopes';

interface AuthenticatedRequest extends FastifyRequest {
  accountId?: string;
  apiKey?: ApiKeyRow;
}

const unauthorized = () =>
  new DomainError('unauthorized', 'unauthenticated', 'missing or invalid API key');

/**
 * A route of the account API that needs a scope beside `account` (403 `insufficient_scope`
 * naming it; the OpenAPI document lists it from the same mark): `plan` for `PUT /account/plan`
 * (ADR 0604 amendment "A scope of its own for plan changes").
 */
export const RequiresScope = (scope: ApiKeyScope) => routeScope(scope);

/** `Authorization: Bearer <API key>` with the `account` scope, and a route's own (RequiresScope). */
@Injectable()
export class AccountKeyGuard implements CanActivate {
  constructor(
    private readonly credentials: CredentialsService,
    private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const key = bearerOf(request.headers.authorization);
    if (!key) throw unauthorized();
    const resolved = await this.credentials.resolveApiKey(key);
    if (!resolved) throw unauthorized();
    if (!resolved.key.scopes.includes('account')) {
      throw new DomainError('insufficient_scope', 'forbidden', 'this API key has no account scope');
    }
    const own = this.reflector.get<ApiKeyScope | undefined>(ROUTE_SCOPE, context.getHandler());
    if (own && !resolved.key.scopes.includes(own)) {
      throw new DomainError(
        'insufficient_scope',
        'forbidden',
        `this API key has no ${own} scope (${API_KEY_SCOPE_WORDS[own]})`,
        { details: { required: own } },
      );
    }
    request.accountId = resolved.key.accountId;
    request.apiKey = resolved.key;
    return true;
  }
}

/**
 * `Authorization: Bearer <OPERATOR_TOKEN>`, or OPERATOR_TOKEN_PREVIOUS while the token is rotated
 * (compared in constant time).
 */
@Injectable()
export class OperatorGuard implements CanActivate {
  private readonly tokens: SharedSecrets;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.tokens = new SharedSecrets([config.OPERATOR_TOKEN, config.OPERATOR_TOKEN_PREVIOUS]);
  }

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    if (!this.tokens.matches(bearerOf(request.headers.authorization))) {
      throw new DomainError('unauthorized', 'unauthenticated', 'missing or invalid operator token');
    }
    return true;
  }
}

/** The account of the API key that authenticated the request. */
export const AccountId = createParamDecorator((_: unknown, context: ExecutionContext): string => {
  const accountId = context.switchToHttp().getRequest<AuthenticatedRequest>().accountId;
  if (!accountId) throw unauthorized();
  return accountId;
});

/** The API key that authenticated the request (AccountKeyGuard), as it was resolved. */
export const CallerKey = createParamDecorator(
  (_: unknown, context: ExecutionContext): ApiKeyRow => {
    const key = context.switchToHttp().getRequest<AuthenticatedRequest>().apiKey;
    if (!key) throw unauthorized();
    return key;
  },
);

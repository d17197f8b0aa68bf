import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@meridian/errors';
import { bearerOf, SharedSecrets } from '@meridian/platform-http';
import type { FastifyRequest } from 'fastify';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';

/**
 * `Authorization: Bearer <OPERATOR_TOKEN>`, billing-ledger's operator token (or
 * OPERATOR_TOKEN_PREVIOUS while it is rotated), compared in constant time as billing-ledger's
 * OperatorGuard does. Without OPERATOR_TOKEN the operator routes refuse everyone: a deployment
 * opts in by giving the token.
 */
@Injectable()
export class OperatorGuard implements CanActivate {
  private readonly tokens: SharedSecrets;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.tokens = new SharedSecrets(
      config.OPERATOR_TOKEN ? [config.OPERATOR_TOKEN, config.OPERATOR_TOKEN_PREVIOUS] : [],
    );
  }

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    if (!this.tokens.matches(bearerOf(request.headers.authorization)))
      throw new DomainError('unauthorized', 'unauthenticated', 'missing or invalid operator token');
    return true;
  }
}

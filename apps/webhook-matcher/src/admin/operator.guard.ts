import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { DomainError } from '@meridian/errors';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';

const sha256 = (text: string) => createHash('sha256').update(text).digest();

/**
 * `Authorization: Bearer <OPERATOR_TOKEN>`, billing-ledger's operator token, compared in constant
 * time (as billing-ledger's OperatorGuard). Without OPERATOR_TOKEN the operator routes refuse
 * everyone: a deployment opts in by giving the token.
 */
@Injectable()
export class OperatorGuard implements CanActivate {
  private readonly expected: Buffer | undefined;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.expected = config.OPERATOR_TOKEN ? sha256(config.OPERATOR_TOKEN) : undefined;
  }

  canActivate(context: ExecutionContext): boolean {
    const header = context.switchToHttp().getRequest<FastifyRequest>().headers.authorization;
    const match = typeof header === 'string' ? /^Bearer\s+(\S{1,512})\s*$/i.exec(header) : null;
    if (!this.expected || !match || !timingSafeEqual(sha256(match[1]!), this.expected))
      throw new DomainError('unauthorized', 'unauthenticated', 'missing or invalid operator token');
    return true;
  }
}

import {
  Body,
  CanActivate,
  Controller,
  ExecutionContext,
  HttpCode,
  Inject,
  Injectable,
  Post,
  UseGuards,
} from '@nestjs/common';
import { DomainError } from '@meridian/errors';
import { bearerOf, SharedSecrets } from '@meridian/platform-http';
import type { FastifyRequest } from 'fastify';
import { isIP } from 'node:net';
import { z } from 'zod';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';
import { parseBody } from '../http-validation';
import { AuthService } from './auth.service';

/**
 * `Authorization: Bearer <OPERATOR_TOKEN>`, not a session: the operator may be the one locked
 * out of sign-in (README "Sign-in throttle").
 */
@Injectable()
export class OperatorTokenGuard implements CanActivate {
  private readonly tokens: SharedSecrets;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.tokens = new SharedSecrets([config.OPERATOR_TOKEN]);
  }

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    if (!this.tokens.matches(bearerOf(request.headers.authorization)))
      throw new DomainError('unauthenticated', 'unauthenticated', 'the operator token is required');
    return true;
  }
}

const clearBody = z
  .strictObject({
    email: z.string().trim().toLowerCase().min(1).max(254).optional(),
    // An IP address as the throttle keys it (QA L8: "not-an-ip" cleared nothing and said 200).
    address: z
      .string()
      .trim()
      .refine((address) => isIP(address) !== 0, { message: 'an IPv4 or IPv6 address' })
      .optional(),
  })
  .refine((body) => body.email !== undefined || body.address !== undefined, {
    message: 'name an email, an address or both',
  });

/** The operator's way to end sign-in locks (ADR 0601 amendment "Sign-in throttle"). */
@Controller('api/admin')
@UseGuards(OperatorTokenGuard)
export class SignInLocksController {
  constructor(private readonly auth: AuthService) {}

  /** `{email?, address?}` → `{cleared}`: the failure rows removed (0: nothing was counted). */
  @Post('sign-in-locks/clear')
  @HttpCode(200)
  async clear(@Body() body: unknown) {
    const target = parseBody(clearBody, body);
    return { cleared: await this.auth.clearSignInLocks(target) };
  }
}

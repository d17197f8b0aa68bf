import {
  CanActivate,
  createParamDecorator,
  ExecutionContext,
  Injectable,
  type Type,
} from '@nestjs/common';
import { DomainError } from '@meridian/errors';
import type { FastifyRequest } from 'fastify';
import { AuthService, type CurrentSession } from './auth.service';
import { sameSecret } from './secrets';
import { readCookie, SESSION_COOKIE } from './session-cookie';
import type { Role } from './users.repository';

export { SESSION_COOKIE };

export const CSRF_HEADER = 'x-csrf-token';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

type DashboardRequest = FastifyRequest & { dashboard?: CurrentSession };

/**
 * Session cookie → user, the role the route needs, and for every state-changing method the
 * session's CSRF token in `X-CSRF-Token` (the SameSite cookie is the first line; this the second).
 */
function sessionGuard(role: Role): Type<CanActivate> {
  @Injectable()
  class RoleSessionGuard implements CanActivate {
    constructor(private readonly auth: AuthService) {}

    async canActivate(context: ExecutionContext): Promise<boolean> {
      const request = context.switchToHttp().getRequest<DashboardRequest>();
      const current = await this.auth.current(readCookie(request.headers.cookie, SESSION_COOKIE));
      if (!current)
        throw new DomainError('unauthenticated', 'unauthenticated', 'sign in to continue');
      if (current.user.role !== role)
        throw new DomainError('forbidden', 'forbidden', `this page is for the ${role} role`);
      if (!SAFE_METHODS.has(request.method)) {
        const given = request.headers[CSRF_HEADER];
        if (typeof given !== 'string' || !sameSecret(given, current.session.csrfToken))
          throw new DomainError('csrf_failed', 'forbidden', 'missing or wrong CSRF token');
      }
      request.dashboard = current;
      return true;
    }
  }
  return RoleSessionGuard;
}

export const CustomerGuard = sessionGuard('customer');
export const OperatorGuard = sessionGuard('operator');

/** Any signed-in user (sign-out, password change), CSRF checked the same way. */
@Injectable()
export class AnyUserGuard implements CanActivate {
  constructor(private readonly auth: AuthService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<DashboardRequest>();
    const current = await this.auth.current(readCookie(request.headers.cookie, SESSION_COOKIE));
    if (!current)
      throw new DomainError('unauthenticated', 'unauthenticated', 'sign in to continue');
    if (!SAFE_METHODS.has(request.method)) {
      const given = request.headers[CSRF_HEADER];
      if (typeof given !== 'string' || !sameSecret(given, current.session.csrfToken))
        throw new DomainError('csrf_failed', 'forbidden', 'missing or wrong CSRF token');
    }
    request.dashboard = current;
    return true;
  }
}

/** The guarded route's session (set by the guards above). */
export const Current = createParamDecorator(
  (_: unknown, context: ExecutionContext): CurrentSession =>
    context.switchToHttp().getRequest<DashboardRequest>().dashboard!,
);

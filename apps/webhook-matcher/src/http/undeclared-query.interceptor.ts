import {
  Injectable,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { OPENAPI_ROUTE, type ApiRouteSpec } from '@meridian/platform-http/openapi';
import type { Observable } from 'rxjs';
import { noQuery, parseQuery } from './validation';

/**
 * The one rule for query strings of the API: a route whose `@ApiRoute` declares no `query` takes
 * no parameter, and any is 400 `invalid_query` (`query: unknown parameter "x"`), as the routes
 * with a query schema answer one they do not know (their handler's `parseQuery`). Global, so no
 * route can forget it; after the guards, so a request without credentials is still 401. Routes
 * outside the API (no `@ApiRoute`: /healthz, /readyz, /metrics, /openapi.json) are left alone.
 */
@Injectable()
export class UndeclaredQueryInterceptor implements NestInterceptor {
  constructor(private readonly reflector: Reflector) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const spec = this.reflector.get<ApiRouteSpec | undefined>(OPENAPI_ROUTE, context.getHandler());
    if (spec && spec.query === undefined)
      parseQuery(noQuery, context.switchToHttp().getRequest<{ query?: unknown }>().query);
    return next.handle();
  }
}

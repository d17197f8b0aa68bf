import {
  Inject,
  Injectable,
  Optional,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
  type Provider,
} from '@nestjs/common';
import { APP_INTERCEPTOR, Reflector } from '@nestjs/core';
import type { Observable } from 'rxjs';
import { z } from 'zod';
import { OPENAPI_ROUTE, type ApiRouteSpec } from './openapi/api-route.decorator';
import { parseQuery } from './request-validation';

/** Refuses a query string of a route that declares none: throws its 400, or returns. */
export type NoQueryCheck = (query: unknown) => unknown;

/** The app's own check (its error shape); the platform's `parseQuery` with no parameter if none. */
export const NO_QUERY_CHECK = Symbol('NO_QUERY_CHECK');

/** 400 `invalid_query` (`query: unknown parameter "x"`) for any parameter. */
export const refuseAnyQuery: NoQueryCheck = (query) => parseQuery(z.strictObject({}), query);

/**
 * The one rule for query strings of an API: a route whose `@ApiRoute` declares no `query` takes
 * no parameter, and any is 400 `invalid_query` (`query: unknown parameter "x"`), as the routes
 * with a query schema answer one they do not know (their handler's `parseQuery`). Global, so no
 * route can forget it; after the guards, so a request without credentials is still 401; before
 * the handler, so a write with one writes nothing. Routes outside the API (no `@ApiRoute`:
 * /healthz, /readyz, /metrics, /openapi.json) are left alone. An app with its own error shape
 * passes its check (`NO_QUERY_CHECK`, `undeclaredQueryProviders`).
 */
@Injectable()
export class UndeclaredQueryInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    @Optional() @Inject(NO_QUERY_CHECK) private readonly check: NoQueryCheck = refuseAnyQuery,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const spec = this.reflector.get<ApiRouteSpec | undefined>(OPENAPI_ROUTE, context.getHandler());
    if (spec && spec.query === undefined)
      this.check(context.switchToHttp().getRequest<{ query?: unknown }>().query);
    return next.handle();
  }
}

/** An app module's providers for the rule: the interceptor, global, with the app's check. */
export const undeclaredQueryProviders = (check: NoQueryCheck = refuseAnyQuery): Provider[] => [
  { provide: NO_QUERY_CHECK, useValue: check },
  { provide: APP_INTERCEPTOR, useClass: UndeclaredQueryInterceptor },
];

import 'reflect-metadata';
import type { CallHandler, ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { isDomainError } from '@meridian/errors';
import { UndeclaredQueryInterceptor } from '@meridian/platform-http';
import { declaredRoutes } from '@meridian/platform-http/openapi';
import { of } from 'rxjs';
import { REST_CONTROLLERS } from '../app.module';

const contextOf = (handler: unknown, query: Record<string, unknown>) =>
  ({
    getHandler: () => handler,
    switchToHttp: () => ({ getRequest: () => ({ query }) }),
  }) as unknown as ExecutionContext;

const next: CallHandler = { handle: () => of('handled') };

const answerOf = (handler: unknown, query: Record<string, unknown>) => {
  try {
    // The platform's own check, as the app module installs it (`undeclaredQueryProviders()`).
    new UndeclaredQueryInterceptor(new Reflector()).intercept(contextOf(handler, query), next);
    return 'passed';
  } catch (error) {
    if (!isDomainError(error)) throw error;
    return `${error.code} ${error.message}`;
  }
};

describe('UndeclaredQueryInterceptor: a route declaring no query takes no parameter', () => {
  const routes = declaredRoutes(REST_CONTROLLERS).map((route) => ({
    ...route,
    handler: (REST_CONTROLLERS.find((c) => c.name === route.controller)!.prototype as never)[
      route.handler
    ] as unknown,
  }));
  const without = routes.filter((route) => route.spec?.query === undefined);

  it('every route of the API is either kind (some of each)', () => {
    expect(without.length).toBeGreaterThan(10);
    expect(routes.length - without.length).toBeGreaterThanOrEqual(5);
  });

  it.each(without.map((route) => [`${route.method} ${route.path}`, route.handler] as const))(
    '%s: an unknown parameter is 400 invalid_query naming it; none passes',
    (_name, handler) => {
      expect(answerOf(handler, { x: '1' })).toBe('invalid_query query: unknown parameter "x"');
      expect(answerOf(handler, {})).toBe('passed');
    },
  );

  it('a route with a query schema is left to its handler (parseQuery)', () => {
    for (const route of routes.filter((r) => r.spec?.query !== undefined))
      expect(answerOf(route.handler, { x: '1' })).toBe('passed');
  });

  it('a route outside the API (no @ApiRoute: /metrics, /healthz) is left alone', () => {
    expect(answerOf(() => undefined, { x: '1' })).toBe('passed');
  });
});

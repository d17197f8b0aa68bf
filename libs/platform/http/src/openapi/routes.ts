import { RequestMethod, type Type } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { OPENAPI_ROUTE, ROUTE_SCOPE, type ApiRouteSpec } from './api-route.decorator';

export interface DeclaredRoute {
  method: string;
  /** OpenAPI form: `/api/v1/webhooks/{id}`. */
  path: string;
  controller: string;
  handler: string;
  spec: ApiRouteSpec | undefined;
  /** The scope the route needs beside the app's (`RequiresScope`). */
  scope?: string;
}

const joinPath = (...parts: string[]) =>
  `/${parts
    .flatMap((part) => part.split('/'))
    .filter(Boolean)
    .join('/')}`;

const toOpenApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

function pathsOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.map(String);
  return [typeof value === 'string' ? value : '/'];
}

/** Every route Nest would map for these controllers, read from the decorators' metadata. */
export function declaredRoutes(controllers: readonly Type<unknown>[]): DeclaredRoute[] {
  const routes: DeclaredRoute[] = [];
  for (const controller of controllers) {
    const prefixes = pathsOf(Reflect.getMetadata(PATH_METADATA, controller));
    const proto = controller.prototype as Record<string, unknown>;
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (name === 'constructor') continue;
      const handler = proto[name];
      if (typeof handler !== 'function') continue;
      const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
      if (method === undefined) continue;
      const spec = Reflect.getMetadata(OPENAPI_ROUTE, handler) as ApiRouteSpec | undefined;
      const scope = Reflect.getMetadata(ROUTE_SCOPE, handler) as string | undefined;
      for (const prefix of prefixes)
        for (const path of pathsOf(Reflect.getMetadata(PATH_METADATA, handler)))
          routes.push({
            method: RequestMethod[method]!.toLowerCase(),
            path: toOpenApiPath(joinPath(prefix, path)),
            controller: controller.name,
            handler: name,
            spec,
            ...(scope === undefined ? {} : { scope }),
          });
    }
  }
  return routes;
}

/** The names of an OpenAPI path's parameters (`/webhooks/{id}` → `id`). */
export const pathParameterNames = (path: string): string[] =>
  [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);

/**
 * Routes that would be served without a description (CI fails on any): no `@ApiRoute`, a route
 * that takes a body without its schema, or a path parameter without its schema (`params`).
 */
export function routesWithoutSpec(controllers: readonly Type<unknown>[]): string[] {
  return declaredRoutes(controllers)
    .filter(
      (route) =>
        !route.spec ||
        (['post', 'put', 'patch'].includes(route.method) &&
          !route.spec.body &&
          !route.spec.noBody) ||
        pathParameterNames(route.path).some((name) => !route.spec?.params?.[name]),
    )
    .map(
      (route) =>
        `${route.method.toUpperCase()} ${route.path} (${route.controller}.${route.handler})`,
    );
}

/**
 * Routes whose success answer has no schema in the document (clients generating SDKs need one):
 * every route needs a 2xx response with a `schema`, unless its only success is a 204 (no body).
 */
export function routesWithoutResponseSchema(controllers: readonly Type<unknown>[]): string[] {
  return declaredRoutes(controllers)
    .filter((route) => {
      const success = Object.entries(route.spec?.responses ?? {}).filter(
        ([status]) => Number(status) >= 200 && Number(status) < 300,
      );
      if (success.length === 1 && success[0]![0] === '204') return false;
      return !success.some(([, response]) => response.schema);
    })
    .map(
      (route) =>
        `${route.method.toUpperCase()} ${route.path} (${route.controller}.${route.handler})`,
    );
}

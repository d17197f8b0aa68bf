import { SetMetadata } from '@nestjs/common';
import type { z } from 'zod';

export const OPENAPI_ROUTE = Symbol('OPENAPI_ROUTE');

export type ApiAuth = 'api-key' | 'operator' | 'session' | 'none';

/**
 * A request header a route reads (`Idempotency-Key`: an OpenAPI `in: header` parameter), or a
 * header an answer carries (`headers` of a response).
 */
export interface ApiHeaderSpec {
  description: string;
  schema?: z.ZodType;
  required?: boolean;
}

export interface ApiResponseSpec {
  description: string;
  schema?: z.ZodType;
  /**
   * Headers this answer carries besides the shared ones the document adds by itself
   * (X-Request-Id on every answer, Retry-After on 429 and 503, Allow on 405).
   */
  headers?: Record<string, ApiHeaderSpec>;
}

/**
 * What `/openapi.json` says about one route. The schemas are the very objects the handler
 * validates with (`parseBody(schema, body)`), so the document cannot drift from the code.
 */
export interface ApiRouteSpec {
  summary: string;
  /** Request body schema; omit for routes that take no body (then `noBody: true`). */
  body?: z.ZodType;
  noBody?: true;
  /**
   * The body may be left out (`requestBody.required: false`): the route validates `body ?? {}`,
   * or takes no body and an empty object alike.
   */
  bodyOptional?: true;
  /**
   * The schema of each path parameter (`{id}`), the very one the route checks it with (its id
   * pattern): required for every parameter of the path (`routesWithoutSpec`).
   */
  params?: Record<string, z.ZodType>;
  query?: z.ZodType;
  /** Request headers the route reads, by name (not the auth header: `auth` says that). */
  headers?: Record<string, ApiHeaderSpec>;
  auth?: ApiAuth;
  /**
   * Success and notable error answers by status. An error status (4xx, 5xx) without a schema is
   * documented with the error body (`{"error", "message", "request_id"}`); its description names
   * the codes it may carry.
   */
  responses?: Record<number, ApiResponseSpec>;
  tags?: string[];
}

/** Marks a route for the OpenAPI document (required on every route: see `routesWithoutSpec`). */
export const ApiRoute = (spec: ApiRouteSpec): MethodDecorator => SetMetadata(OPENAPI_ROUTE, spec);

/** Where `RequiresScope` keeps a route's own scope: the app's guard and the document read it. */
export const ROUTE_SCOPE = Symbol('ROUTE_SCOPE');

/**
 * An `api-key` route that needs a scope beside the app's own (billing-ledger's `PUT
 * /account/plan`: `plan` beside `account`). The app's guard enforces it (it reads `ROUTE_SCOPE`);
 * the OpenAPI document lists it in the operation's security requirement, from the same mark.
 */
export const RequiresScope = (scope: string): MethodDecorator => SetMetadata(ROUTE_SCOPE, scope);

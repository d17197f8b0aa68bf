import type { Type } from '@nestjs/common';
import { z } from 'zod';
import type { ApiAuth, ApiHeaderSpec, ApiResponseSpec, ApiRouteSpec } from './api-route.decorator';
import { declaredRoutes, pathParameterNames } from './routes';
import { SchemaComponents } from './schema-components';
import { DATABASE_UNAVAILABLE_DESCRIPTION } from '../database-unavailable';

export interface OpenApiInfo {
  title: string;
  version: string;
  description?: string;
}

/** What the document says beyond the routes' own specs. */
export interface OpenApiOptions {
  /**
   * The scope an API key needs for this app's `api-key` routes (its guard checks it: `account`,
   * `webhooks`, `audit`): listed in each such operation's security requirement and as
   * `x-required-scope`. A route that needs one more (`RequiresScope`) lists both, and its
   * `x-required-scope` is the list.
   */
  apiKeyScope?: string;
  /**
   * The app's routes read or write its Postgres: every operation declares the 503
   * `database_unavailable` (with Retry-After) the platform's filter answers while Postgres is out
   * of reach, beside the route's own 503 codes.
   */
  database?: boolean;
  /**
   * The app's request body limit (`createHttpApp`'s `bodyLimitBytes`; its default, 5 MiB, when
   * unset): named in the 413 every operation with a request body declares.
   */
  bodyLimitBytes?: number;
}

/** `createHttpApp`'s body limit when the app sets none (COMPAT: about 5 MiB). */
export const DEFAULT_BODY_LIMIT_BYTES = 5 * 1024 * 1024;

const sizeOf = (bytes: number) =>
  bytes % (1024 * 1024) === 0
    ? `${bytes / (1024 * 1024)} MiB`
    : bytes % 1024 === 0
      ? `${bytes / 1024} KiB`
      : `${bytes} bytes`;

/**
 * The framework's refusals of a body, answered before the route runs (`createHttpApp`: bodies
 * are JSON, up to the body limit): declared by every operation with a request body, the 413
 * naming the limit in bytes (`undeclaredErrorAnswers` sends one byte more).
 */
export const bodyRefusals = (bodyLimitBytes: number): Record<413 | 415, ApiResponseSpec> => ({
  413: {
    description:
      `request_too_large: the body is over ${sizeOf(bodyLimitBytes)} ` +
      `(${bodyLimitBytes} bytes)`,
  },
  415: {
    description:
      'unsupported_media_type: the body is not sent as JSON (Content-Type application/json ' +
      'or application/*+json)',
  },
});

type JsonSchema = Record<string, unknown>;

/** Request schemas describe what is accepted (input side); transforms and refinements become plain types. */
const inputSchema = (schema: z.ZodType): JsonSchema => {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
  }) as JsonSchema;
  return rest;
};

const outputSchema = (schema: z.ZodType): JsonSchema => {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, {
    io: 'output',
    unrepresentable: 'any',
  }) as JsonSchema;
  return rest;
};

const ERROR_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    error: { type: 'string', description: 'stable error code' },
    message: { type: 'string' },
    request_id: { type: 'string' },
  },
  required: ['error', 'request_id'],
};

const SECURITY: Record<Exclude<ApiAuth, 'none'>, JsonSchema> = {
  'api-key': { type: 'http', scheme: 'bearer', description: 'An API key (`mrd_…`).' },
  operator: { type: 'http', scheme: 'bearer', description: 'The deployment operator token.' },
  session: {
    type: 'apiKey',
    in: 'cookie',
    name: 'mrd_session',
    description: 'Dashboard session cookie; state-changing calls also send X-CSRF-Token.',
  },
};

/**
 * The document is served by the API itself and its paths carry the whole prefix (`/api/v1/…`,
 * `/v1/…`), so the server is the origin the document came from: a generated client's base URL
 * is the API's origin, not a base ending in `/v1` (which would call `/v1/v1/…`).
 */
const SERVERS = [
  {
    url: '/',
    description:
      'The origin serving this document; the paths carry the full prefix (/api/v1/…, /v1/…).',
  },
];

/**
 * Response headers every app sends (libs/platform/http: the request id on every answer,
 * `DomainErrorFilter`'s Retry-After on 429 and 503, the 405 rule's Allow), declared once in
 * `components/headers` and referred to from each response they go with.
 */
const SHARED_HEADERS: Record<string, JsonSchema> = {
  'X-Request-Id': {
    description: "The request's id: the caller's X-Request-Id when sane, else a new one.",
    schema: { type: 'string' },
  },
  'Retry-After': {
    description: 'Seconds to wait before trying again.',
    schema: { type: 'integer', minimum: 1 },
  },
  Allow: {
    description: 'The methods the path has.',
    schema: { type: 'string' },
  },
};

/** The names of the shared headers an answer with this status carries (`default`: any error). */
const sharedHeadersOf = (status: string): string[] => [
  'X-Request-Id',
  ...(status === '429' || status === '503' ? ['Retry-After'] : []),
  ...(status === '405' ? ['Allow'] : []),
];

/** A route's responses with the 503 database_unavailable added (OpenApiOptions.database). */
function withDatabaseUnavailable(
  responses: Record<number, ApiResponseSpec>,
  options: OpenApiOptions,
): Record<number, ApiResponseSpec> {
  if (!options.database) return responses;
  const own = responses[503];
  return {
    ...responses,
    503: own
      ? { ...own, description: `${own.description}; ${DATABASE_UNAVAILABLE_DESCRIPTION}` }
      : { description: DATABASE_UNAVAILABLE_DESCRIPTION },
  };
}

/** The 400 of a route that declares no query (`UndeclaredQueryInterceptor`), as it names it. */
export const NO_QUERY_DESCRIPTION = 'invalid_query: a query parameter (the route takes none)';

/**
 * The body of a query refused by its schema (`requestPartError`): the error body and where
 * (`location` `query`, `path` `query` or `query.<parameter>`).
 */
const queryRefusalBody = z.looseObject({
  error: z.string().describe('stable error code'),
  message: z.string().optional(),
  request_id: z.string(),
  location: z.string().optional().describe('the part of the request refused: `query`'),
  path: z.string().optional().describe('where in that part: `query`, `query.<parameter>`'),
});

/**
 * A route's responses with 400 invalid_query when its spec declares no query: the one rule for
 * query strings (`UndeclaredQueryInterceptor`, or an app's own, as audit-api's) refuses any
 * parameter there. A 400 of the route's own that names invalid_query already is kept as it is;
 * one that does not gets the line after its codes.
 */
function withNoQuery(
  responses: Record<number, ApiResponseSpec>,
  spec: ApiRouteSpec,
): Record<number, ApiResponseSpec> {
  if (spec.query !== undefined) return responses;
  const own = responses[400];
  if (own && /(^|[^a-z_])invalid_query([^a-z_]|$)/.test(own.description)) return responses;
  return {
    ...responses,
    400: own
      ? { ...own, description: `${own.description}; ${NO_QUERY_DESCRIPTION}` }
      : { description: NO_QUERY_DESCRIPTION, schema: queryRefusalBody },
  };
}

/**
 * A body-taking route's responses with the framework's 413 and 415 (`bodyRefusals`); a route
 * that declares one itself keeps its description, its own codes after the framework's.
 */
function withBodyRefusals(
  responses: Record<number, ApiResponseSpec>,
  options: OpenApiOptions,
): Record<number, ApiResponseSpec> {
  const out = { ...responses };
  for (const [status, refusal] of Object.entries(
    bodyRefusals(options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES),
  )) {
    const own = out[Number(status)];
    out[Number(status)] = own
      ? { ...own, description: `${refusal.description}; ${own.description}` }
      : refusal;
  }
  return out;
}

/** The tag of an operation: its path's first segment after `api` and the version. */
function tagOf(path: string): string | undefined {
  return path
    .split('/')
    .filter(Boolean)
    .find((segment, i, all) => {
      const isPrefix = segment === 'api' || /^v\d+$/.test(segment);
      return !isPrefix && all.slice(0, i).every((s) => s === 'api' || /^v\d+$/.test(s));
    });
}

/** Query parameters out of an object schema: one parameter per property. */
function queryParameters(json: JsonSchema): JsonSchema[] {
  const properties = (json['properties'] ?? {}) as Record<string, JsonSchema>;
  const required = new Set((json['required'] ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: 'query',
    required: required.has(name),
    schema: property,
  }));
}

/**
 * OpenAPI 3.1 of the given controllers, from their `@ApiRoute` specs and Nest's route metadata.
 * JSON Schema 2020-12 is OpenAPI 3.1's own dialect, so zod 4's output goes in as it is. Every
 * operation whose spec declares no `query` declares 400 invalid_query (`withNoQuery`): an app
 * serving the document refuses a query parameter there (`undeclaredQueryProviders`, or its own
 * rule, as audit-api's `refuseQuery`).
 */
export function buildOpenApiDocument(
  info: OpenApiInfo,
  controllers: readonly Type<unknown>[],
  options: OpenApiOptions = {},
): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  const used = new Set<Exclude<ApiAuth, 'none'>>();
  const components = new SchemaComponents();
  const tags = new Set<string>();
  const headersUsed = new Set<string>();
  const sharedHeaders = (status: string) =>
    Object.fromEntries(
      sharedHeadersOf(status).map((name) => {
        headersUsed.add(name);
        return [name, { $ref: `#/components/headers/${name}` }];
      }),
    );
  for (const route of declaredRoutes(controllers)) {
    const spec = route.spec;
    if (!spec) continue;
    const context = `${route.controller.replace(/Controller$/, '')}.${route.handler}`;
    const input = (schema: z.ZodType, role: string) =>
      components.add(inputSchema(schema), `${context}.${role}`, 'input');
    const headerParameter = (name: string, header: ApiHeaderSpec) => ({
      required: header.required ?? false,
      description: header.description,
      schema: header.schema ? input(header.schema, name) : { type: 'string' },
    });
    const parameters: JsonSchema[] = pathParameterNames(route.path).map((name) => {
      const schema = spec.params?.[name];
      return {
        name,
        in: 'path',
        required: true,
        schema: schema ? input(schema, name) : { type: 'string' },
      };
    });
    if (spec.query) parameters.push(...queryParameters(input(spec.query, 'query')));
    for (const [name, header] of Object.entries(spec.headers ?? {}))
      parameters.push({ name, in: 'header', ...headerParameter(name, header) });
    const responses: Record<string, JsonSchema> = {};
    const own = withDatabaseUnavailable(
      withNoQuery(spec.responses ?? { 200: { description: 'OK' } }, spec),
      options,
    );
    for (const [status, response] of Object.entries(
      spec.body ? withBodyRefusals(own, options) : own,
    ))
      responses[status] = {
        description: response.description,
        headers: {
          ...sharedHeaders(status),
          ...Object.fromEntries(
            Object.entries(response.headers ?? {}).map(([name, header]) => [
              name,
              headerParameter(name, header),
            ]),
          ),
        },
        ...(response.schema
          ? {
              content: {
                'application/json': {
                  schema: components.add(
                    outputSchema(response.schema),
                    `${context}.${status}`,
                    'output',
                  ),
                },
              },
            }
          : Number(status) >= 400
            ? { content: { 'application/json': { schema: ERROR_SCHEMA } } }
            : {}),
      };
    responses['default'] = {
      description: 'Error: `{"error", "message", "request_id"}`',
      headers: sharedHeaders('default'),
      content: { 'application/json': { schema: ERROR_SCHEMA } },
    };
    const auth = spec.auth ?? 'api-key';
    if (auth !== 'none') used.add(auth);
    const operationTags = spec.tags ?? [tagOf(route.path)].filter((tag) => tag !== undefined);
    for (const tag of operationTags) tags.add(tag);
    (paths[route.path] ??= {})[route.method] = {
      operationId: `${route.controller}.${route.handler}`,
      summary: spec.summary,
      ...(operationTags.length ? { tags: operationTags } : {}),
      ...(parameters.length ? { parameters } : {}),
      ...(spec.body
        ? {
            requestBody: {
              required: !spec.bodyOptional,
              content: { 'application/json': { schema: input(spec.body, 'body') } },
            },
          }
        : {}),
      ...(auth === 'none'
        ? { security: [] }
        : auth === 'api-key' && options.apiKeyScope
          ? {
              security: [{ [auth]: [options.apiKeyScope, ...(route.scope ? [route.scope] : [])] }],
              'x-required-scope': route.scope
                ? [options.apiKeyScope, route.scope]
                : options.apiKeyScope,
            }
          : { security: [{ [auth]: [] }] }),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info,
    servers: SERVERS,
    tags: [...tags].sort().map((name) => ({ name })),
    paths,
    components: {
      schemas: components.schemas,
      headers: Object.fromEntries(
        Object.entries(SHARED_HEADERS).filter(([name]) => headersUsed.has(name)),
      ),
      securitySchemes: Object.fromEntries([...used].map((name) => [name, SECURITY[name]])),
    },
  };
}

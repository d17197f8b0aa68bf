import type { Type } from '@nestjs/common';
import { z } from 'zod';
import type { ApiAuth } from './api-route.decorator';
import { declaredRoutes } from './routes';

export interface OpenApiInfo {
  title: string;
  version: string;
  description?: string;
}

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

/** Query parameters out of an object schema: one parameter per property. */
function queryParameters(schema: z.ZodType): JsonSchema[] {
  const json = inputSchema(schema);
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
 * JSON Schema 2020-12 is OpenAPI 3.1's own dialect, so zod 4's output goes in as it is.
 */
export function buildOpenApiDocument(
  info: OpenApiInfo,
  controllers: readonly Type<unknown>[],
): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  const used = new Set<Exclude<ApiAuth, 'none'>>();
  for (const route of declaredRoutes(controllers)) {
    const spec = route.spec;
    if (!spec) continue;
    const parameters: JsonSchema[] = [...route.path.matchAll(/\{([^}]+)\}/g)].map((m) => ({
      name: m[1],
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    if (spec.query) parameters.push(...queryParameters(spec.query));
    for (const [name, header] of Object.entries(spec.headers ?? {}))
      parameters.push({
        name,
        in: 'header',
        required: header.required ?? false,
        description: header.description,
        schema: header.schema ? inputSchema(header.schema) : { type: 'string' },
      });
    const responses: Record<string, JsonSchema> = {};
    for (const [status, response] of Object.entries(
      spec.responses ?? { 200: { description: 'OK' } },
    ))
      responses[status] = {
        description: response.description,
        ...(response.schema
          ? { content: { 'application/json': { schema: outputSchema(response.schema) } } }
          : Number(status) >= 400
            ? { content: { 'application/json': { schema: ERROR_SCHEMA } } }
            : {}),
      };
    responses['default'] = {
      description: 'Error: `{"error", "message", "request_id"}`',
      content: { 'application/json': { schema: ERROR_SCHEMA } },
    };
    const auth = spec.auth ?? 'api-key';
    if (auth !== 'none') used.add(auth);
    (paths[route.path] ??= {})[route.method] = {
      operationId: `${route.controller}.${route.handler}`,
      summary: spec.summary,
      ...(spec.tags ? { tags: spec.tags } : {}),
      ...(parameters.length ? { parameters } : {}),
      ...(spec.body
        ? {
            requestBody: {
              required: true,
              content: { 'application/json': { schema: inputSchema(spec.body) } },
            },
          }
        : {}),
      ...(auth === 'none' ? { security: [] } : { security: [{ [auth]: [] }] }),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info,
    paths,
    components: {
      securitySchemes: Object.fromEntries([...used].map((name) => [name, SECURITY[name]])),
    },
  };
}

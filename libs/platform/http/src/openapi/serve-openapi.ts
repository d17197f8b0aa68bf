import type { Type } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { buildOpenApiDocument, type OpenApiInfo } from './openapi-document';
import { renderReferencePage } from './reference-page';

export interface OpenApiServing {
  /** Where the JSON goes; the reference page is served at the same base + `reference`. */
  jsonPath?: string;
  pagePath?: string;
}

/**
 * `GET /openapi.json` and `GET /reference` (HTML) for the app's controllers. Built once at start:
 * the document only changes with the code.
 */
export function serveOpenApi(
  app: NestFastifyApplication,
  info: OpenApiInfo,
  controllers: readonly Type<unknown>[],
  options: OpenApiServing = {},
): Record<string, unknown> {
  const document = buildOpenApiDocument(info, controllers);
  const page = renderReferencePage(document);
  const fastify = app.getHttpAdapter().getInstance();
  fastify.get(options.jsonPath ?? '/openapi.json', async (_request, reply) =>
    reply.header('content-type', 'application/json; charset=utf-8').send(document),
  );
  fastify.get(options.pagePath ?? '/reference', async (_request, reply) =>
    reply.header('content-type', 'text/html; charset=utf-8').send(page),
  );
  return document;
}

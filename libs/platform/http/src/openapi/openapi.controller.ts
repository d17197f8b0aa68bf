import { Controller, Get, Header, type Type } from '@nestjs/common';
import { buildOpenApiDocument, type OpenApiInfo, type OpenApiOptions } from './openapi-document';
import { renderReferencePage } from './reference-page';

/**
 * A controller serving `GET /openapi.json` and `GET /reference` (HTML) for `controllers`; an app
 * registers it beside them. The document is built once, on first use: it changes only with code.
 */
export function openApiController(
  info: OpenApiInfo,
  controllers: readonly Type<unknown>[],
  options: OpenApiOptions = {},
): Type<unknown> {
  return openApiDocumentController(() => buildOpenApiDocument(info, controllers, options));
}

/**
 * The same two routes for a document an app builds itself (`build`, usually
 * `buildOpenApiDocument` and a change that depends on the deployment's settings), called once, on
 * first use.
 */
export function openApiDocumentController(build: () => Record<string, unknown>): Type<unknown> {
  let document: Record<string, unknown> | undefined;
  let page: string | undefined;
  const built = () => (document ??= build());

  @Controller()
  class OpenApiController {
    @Get('openapi.json')
    json() {
      return built();
    }

    @Get('reference')
    @Header('content-type', 'text/html; charset=utf-8')
    reference() {
      return (page ??= renderReferencePage(built()));
    }
  }
  return OpenApiController;
}

import type { Type } from '@nestjs/common';
import {
  buildOpenApiDocument,
  openApiDocumentController,
  type OpenApiInfo,
  type OpenApiOptions,
} from '@meridian/platform-http/openapi';
import {
  testDeliveryLimitsDescription,
  type TestDeliveryLimits,
} from '../webhooks/test-delivery-limits';

const TEST_ROUTE = '/api/v1/webhooks/{id}/test';

/**
 * The matcher's `/openapi.json` and `/reference`: the platform's document for `controllers`, with
 * the test route's 429 stating this deployment's limits (TEST_DELIVERY_WEBHOOK_PER_MINUTE,
 * TEST_DELIVERY_ACCOUNT_PER_HOUR), not the defaults its decorator was written with.
 */
export function buildMatcherOpenApi(
  info: OpenApiInfo,
  controllers: readonly Type<unknown>[],
  options: OpenApiOptions,
  limits: TestDeliveryLimits,
): Record<string, unknown> {
  const document = buildOpenApiDocument(info, controllers, options);
  const paths = document['paths'] as Record<
    string,
    Record<string, { responses: Record<string, { description: string }> }>
  >;
  const refused = paths[TEST_ROUTE]?.['post']?.responses['429'];
  if (!refused) throw new Error(`openapi: ${TEST_ROUTE} declares no 429`);
  refused.description = testDeliveryLimitsDescription(limits);
  return document;
}

/** The platform's `/openapi.json` and `/reference` routes, serving `buildMatcherOpenApi`. */
export function matcherOpenApiController(
  ...args: Parameters<typeof buildMatcherOpenApi>
): Type<unknown> {
  return openApiDocumentController(() => buildMatcherOpenApi(...args));
}

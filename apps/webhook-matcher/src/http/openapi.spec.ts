import 'reflect-metadata';
import { REST_CONTROLLERS } from '../app.module';
import { testDeliveryLimits } from '../webhooks/test-delivery-limits';
import { buildMatcherOpenApi } from './openapi';

describe("webhook-matcher's served OpenAPI document", () => {
  it("states the configured test-delivery limits in the test route's 429", () => {
    const document = buildMatcherOpenApi(
      { title: 'webhooks', version: 'v1' },
      REST_CONTROLLERS,
      { database: true },
      testDeliveryLimits({
        TEST_DELIVERY_WEBHOOK_PER_MINUTE: 7,
        TEST_DELIVERY_ACCOUNT_PER_HOUR: 250,
      }),
    );
    const paths = document['paths'] as Record<
      string,
      Record<string, { responses: Record<string, { description: string }> }>
    >;
    expect(paths['/api/v1/webhooks/{id}/test']!['post']!.responses['429']!.description).toMatch(
      /^rate_limited: 7 test deliveries a minute per webhook or 250 an hour per account /,
    );
  });
});

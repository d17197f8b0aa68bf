import 'reflect-metadata';
import {
  buildOpenApiDocument,
  routesWithoutResponseSchema,
  routesWithoutSpec,
} from '@meridian/platform-http/openapi';
import { REST_CONTROLLERS } from './app.module';

describe('audit-api OpenAPI', () => {
  it('has a spec (and a body schema where a body is taken) for every route', () => {
    expect(routesWithoutSpec(REST_CONTROLLERS)).toEqual([]);
  });

  it('has a success response schema for every route (clients generate SDKs from it)', () => {
    expect(routesWithoutResponseSchema(REST_CONTROLLERS)).toEqual([]);
    const document = buildOpenApiDocument({ title: 'audit', version: 'v1' }, REST_CONTROLLERS);
    const paths = document['paths'] as Record<string, Record<string, Record<string, unknown>>>;
    expect(paths['/v1/quota']!['get']).toMatchObject({
      responses: {
        200: {
          content: {
            'application/json': { schema: { required: ['limit', 'used', 'resets_at'] } },
          },
        },
      },
    });
  });

  it('describes the three products and the quota with their zod schemas', () => {
    const document = buildOpenApiDocument({ title: 'audit', version: 'v1' }, REST_CONTROLLERS);
    const paths = document['paths'] as Record<string, Record<string, Record<string, unknown>>>;
    expect(Object.keys(paths).sort()).toEqual([
      '/v1/quota',
      '/v1/rug-pull/check',
      '/v1/wallet-audit/audit',
      '/v1/wallet-audit/check',
    ]);
    expect(paths['/v1/rug-pull/check']!['post']).toMatchObject({
      requestBody: {
        content: {
          'application/json': { schema: { required: ['network', 'contract_address'] } },
        },
      },
    });
  });
});

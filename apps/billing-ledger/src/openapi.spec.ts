import 'reflect-metadata';
import {
  buildOpenApiDocument,
  declaredRoutes,
  routesWithoutResponseSchema,
  routesWithoutSpec,
} from '@meridian/platform-http/openapi';
import { REST_CONTROLLERS } from './app.module';

describe('billing-ledger OpenAPI', () => {
  it('has a spec (and a body schema where a body is taken) for every route', () => {
    expect(routesWithoutSpec(REST_CONTROLLERS)).toEqual([]);
  });

  it('has a success response schema for every route that answers a body', () => {
    expect(routesWithoutResponseSchema(REST_CONTROLLERS)).toEqual([]);
    // 21 routes: 19 answer a body, the two DELETEs 204 without one.
    expect(declaredRoutes(REST_CONTROLLERS)).toHaveLength(21);
    const document = buildOpenApiDocument({ title: 'billing', version: 'v1' }, REST_CONTROLLERS);
    const paths = document['paths'] as Record<string, Record<string, Record<string, unknown>>>;
    expect(paths['/api/v1/account/usage']!['get']).toMatchObject({
      responses: {
        200: {
          content: {
            'application/json': {
              schema: { required: expect.arrayContaining(['from', 'to', 'items', 'total_cu']) },
            },
          },
        },
      },
    });
    expect(paths['/api/v1/api-keys/{id}']!['delete']!['responses']).toMatchObject({
      204: { description: 'deleted' },
    });
  });

  it('describes the account and operator routes with the zod schemas they validate with', () => {
    const document = buildOpenApiDocument({ title: 'billing', version: 'v1' }, REST_CONTROLLERS);
    const paths = document['paths'] as Record<string, Record<string, Record<string, unknown>>>;
    expect(Object.keys(paths)).toEqual(
      expect.arrayContaining([
        '/api/v1/account/usage',
        '/api/v1/access-tokens/{id}/roll',
        '/api/v1/admin/accounts/{id}/plan',
        '/api/v1/admin/accounts/{id}/usage',
      ]),
    );
    expect(paths['/api/v1/admin/accounts/{id}/top-ups']!['post']).toMatchObject({
      security: [{ operator: [] }],
      requestBody: {
        content: {
          'application/json': { schema: { required: ['cu'], additionalProperties: false } },
        },
      },
    });
    expect(paths['/api/v1/admin/accounts']!['get']).toMatchObject({
      security: [{ operator: [] }],
      parameters: expect.arrayContaining([
        expect.objectContaining({ name: 'q', in: 'query' }),
        expect.objectContaining({ name: 'cursor', in: 'query' }),
      ]),
      responses: {
        200: {
          content: {
            'application/json': { schema: { required: ['items', 'next_cursor'] } },
          },
        },
      },
    });
    expect(paths['/api/v1/account/usage']!['get']!['parameters']).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'group_by', in: 'query' })]),
    );
  });
});

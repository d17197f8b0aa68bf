import 'reflect-metadata';
import { buildOpenApiDocument, routesWithoutSpec } from '@meridian/platform-http/openapi';
import { REST_CONTROLLERS } from './app.module';

describe('webhook-matcher OpenAPI', () => {
  it('has a spec (and a body schema where a body is taken) for every route', () => {
    expect(routesWithoutSpec(REST_CONTROLLERS)).toEqual([]);
  });

  it('describes the webhook and address-list routes with the zod schemas they validate with', () => {
    const document = buildOpenApiDocument({ title: 'webhooks', version: 'v1' }, REST_CONTROLLERS);
    const paths = document['paths'] as Record<string, Record<string, Record<string, unknown>>>;
    expect(Object.keys(paths)).toEqual(
      expect.arrayContaining([
        '/api/v1/webhooks',
        '/api/v1/webhooks/limits',
        '/api/v1/webhooks/{id}/secret/rotate',
        '/api/v1/address-lists/{id}/entries/remove',
      ]),
    );
    expect(paths['/api/v1/webhooks']!['post']!['requestBody']).toBeDefined();
    // DELETE answers 200 with the deleted webhook (README), not an empty 204.
    const deleted = paths['/api/v1/webhooks/{id}']!['delete']!['responses'] as Record<
      string,
      unknown
    >;
    expect(Object.keys(deleted)).toContain('200');
    expect(Object.keys(deleted)).not.toContain('204');
    expect(paths['/api/v1/webhooks/{id}/deliveries']!['get']).toMatchObject({
      responses: {
        200: {
          content: {
            'application/json': {
              schema: {
                properties: {
                  items: {
                    items: { required: expect.arrayContaining(['at', 'outcome', 'error_class']) },
                  },
                },
              },
            },
          },
        },
      },
    });
    expect(paths['/api/v1/admin/accounts/{id}/webhooks']!['get']).toMatchObject({
      security: [{ operator: [] }],
    });
  });
});

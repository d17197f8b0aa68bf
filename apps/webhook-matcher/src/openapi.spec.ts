import 'reflect-metadata';
import {
  buildOpenApiDocument,
  declaredRoutes,
  routesWithoutResponseSchema,
  routesWithoutSpec,
} from '@meridian/platform-http/openapi';
import { REST_CONTROLLERS } from './app.module';

describe('webhook-matcher OpenAPI', () => {
  it('has a spec (and a body schema where a body is taken) for every route', () => {
    expect(routesWithoutSpec(REST_CONTROLLERS)).toEqual([]);
  });

  it('has a success response schema for every route that answers a body', () => {
    expect(routesWithoutResponseSchema(REST_CONTROLLERS)).toEqual([]);
    // 24 routes: 23 answer a body, DELETE /address-lists/{id} is 204 without one.
    expect(declaredRoutes(REST_CONTROLLERS)).toHaveLength(24);
    const document = buildOpenApiDocument({ title: 'webhooks', version: 'v1' }, REST_CONTROLLERS);
    const paths = document['paths'] as Record<string, Record<string, Record<string, unknown>>>;
    const schemaOf = (path: string, method: string, status: number) =>
      (
        paths[path]![method]!['responses'] as Record<
          string,
          { content?: Record<string, { schema: Record<string, unknown> }> }
        >
      )[status]!.content?.['application/json']!.schema;
    expect(schemaOf('/api/v1/webhooks/limits', 'get', 200)).toMatchObject({
      additionalProperties: false,
      required: expect.arrayContaining(['tier', 'caps', 'usage']),
    });
    expect(schemaOf('/api/v1/address-lists/{id}', 'delete', 204)).toBeUndefined();
    // The filter tree is recursive: its references resolve inside the answer's own schema
    // resource ($id), not against the OpenAPI document's root.
    const created = schemaOf('/api/v1/webhooks', 'post', 201)!;
    expect(created).toMatchObject({
      $id: expect.stringMatching(/^urn:meridian:webhook-matcher:/),
      required: expect.arrayContaining(['id', 'status', 'status_label', 'filters', 'secret']),
      properties: { status: { enum: expect.arrayContaining(['active', 'paused_no_balance']) } },
    });
    const refs = [...JSON.stringify(created).matchAll(/"\$ref":"#\/\$defs\/([^"]+)"/g)];
    expect(refs.length).toBeGreaterThan(0);
    for (const [, name] of refs) expect(created['$defs']).toHaveProperty([name!]);
    // One $id names one schema wherever it is used (GET and PATCH share the webhook's).
    const byId = new Map<string, Set<string>>();
    for (const op of Object.values(paths).flatMap((ops) => Object.values(ops)))
      for (const response of Object.values(op['responses'] as Record<string, unknown>)) {
        const schema = (response as { content?: Record<string, { schema: { $id?: string } }> })
          .content?.['application/json']?.schema;
        if (schema?.$id)
          (byId.get(schema.$id) ?? byId.set(schema.$id, new Set()).get(schema.$id)!).add(
            JSON.stringify(schema),
          );
      }
    expect([...byId.keys()].sort()).toEqual(
      ['created-webhook', 'rotated-webhook', 'webhook', 'webhooks-page'].map(
        (name) => `urn:meridian:webhook-matcher:${name}`,
      ),
    );
    for (const schemas of byId.values()) expect(schemas.size).toBe(1);
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
    // The create takes an Idempotency-Key and may answer 409 for a cap or a reused key.
    expect(paths['/api/v1/webhooks']!['post']).toMatchObject({
      parameters: [expect.objectContaining({ name: 'Idempotency-Key', in: 'header' })],
      responses: {
        409: {
          description: expect.stringContaining('idempotency_key_reused'),
          content: { 'application/json': { schema: { required: ['error', 'request_id'] } } },
        },
      },
    });
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
                    items: {
                      required: expect.arrayContaining([
                        'at',
                        'outcome',
                        'error_class',
                        'event_attempt',
                        'event_attempts_left',
                      ]),
                      // One event's attempts (?event_id=) include its success.
                      properties: {
                        outcome: { enum: expect.arrayContaining(['success']) },
                        // The event's budget of 8, across its deliveries (ADR 0431 amendment).
                        event_attempt: {
                          anyOf: [{ type: 'integer', minimum: 1, maximum: 8 }, { type: 'null' }],
                        },
                        event_attempts_left: {
                          anyOf: [{ type: 'integer', minimum: 0, maximum: 7 }, { type: 'null' }],
                        },
                      },
                    },
                  },
                },
              },
            },
          },
        },
      },
      parameters: expect.arrayContaining([
        expect.objectContaining({
          name: 'event_id',
          in: 'query',
          required: false,
          schema: expect.objectContaining({ pattern: expect.stringContaining('test_') }),
        }),
      ]),
    });
    expect(paths['/api/v1/admin/accounts/{id}/webhooks']!['get']).toMatchObject({
      security: [{ operator: [] }],
    });
  });
});

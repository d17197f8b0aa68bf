import 'reflect-metadata';
import {
  buildOpenApiDocument,
  declaredRoutes,
  operationsWithUndeclaredErrors,
  refsOutsideComponents,
  routesWithoutResponseSchema,
  routesWithoutSpec,
} from '@meridian/platform-http/openapi';
import { openApiLintErrors } from '@meridian/testing';
import { OPENAPI_OPTIONS, REST_CONTROLLERS } from './app.module';
import { newId } from './credentials/secrets';

describe('billing-ledger OpenAPI', () => {
  const document = buildOpenApiDocument({ title: 'billing', version: 'v1' }, REST_CONTROLLERS);
  const paths = document['paths'] as Record<string, Record<string, Record<string, unknown>>>;

  it('declares every error status of every route, not only under default (QA)', () => {
    expect(operationsWithUndeclaredErrors(document)).toEqual([]);
    const responses = (path: string, method: string) =>
      paths[path]![method]!['responses'] as Record<string, { description: string }>;
    expect(responses('/api/v1/api-keys', 'get')).toMatchObject({
      400: { description: expect.stringContaining('invalid_query') },
      401: { description: expect.stringContaining('unauthorized') },
      403: { description: expect.stringContaining('insufficient_scope') },
    });
    // A route's own 403 keeps its code beside the guard's.
    expect(responses('/api/v1/top-ups', 'post')[403]!.description).toMatch(
      /insufficient_scope.*self_service_disabled/,
    );
    expect(responses('/api/v1/admin/accounts/{id}', 'get')).toMatchObject({
      401: { description: expect.stringContaining('operator token') },
      404: { description: expect.stringContaining('not_found') },
    });
  });

  it('declares 400 invalid_query on every route: one without a query takes none (QA YY)', () => {
    const without: string[] = [];
    for (const [path, operations] of Object.entries(paths))
      for (const [method, operation] of Object.entries(operations)) {
        const responses = operation['responses'] as Record<string, { description: string }>;
        if (!/(^|[^a-z_])invalid_query([^a-z_]|$)/.test(responses['400']?.description ?? ''))
          without.push(`${method.toUpperCase()} ${path}`);
      }
    expect(without).toEqual([]);
    expect(declaredRoutes(REST_CONTROLLERS).length).toBe(26);
  });

  it("names an error's extra fields as the answer carries them: beside error, no details (QA YY)", () => {
    expect(JSON.stringify(document)).not.toMatch(/details\./);
    const responses = paths['/api/v1/api-keys']!['post']!['responses'] as Record<
      string,
      { description: string }
    >;
    expect(responses[403]!.description).toMatch(/scope_not_held.*missing.*held/);
  });

  it('shows the plan scope: in the scopes a key is made with and lists, and as the 403 of a plan change (ADR 0604 amendment)', () => {
    const text = JSON.stringify(document);
    const body = paths['/api/v1/api-keys']!['post']!['requestBody'] as {
      content: { 'application/json': { schema: { properties: { scopes: unknown } } } };
    };
    const scopes = JSON.stringify(body.content['application/json'].schema.properties.scopes);
    expect(scopes).toContain('"plan"');
    expect(scopes).toMatch(/plan: changes the account's plan/);
    expect(text.match(/"enum":\["account","plan","webhooks","audit"\]/g)?.length).toBeGreaterThan(
      2,
    );
    const responses = paths['/api/v1/account/plan']!['put']!['responses'] as Record<
      string,
      { description: string }
    >;
    expect(responses[403]!.description).toMatch(
      /insufficient_scope.*self_service_disabled.*no plan scope/,
    );
    expect(paths['/api/v1/account/plan']!['put']!['summary']).toMatch(/plan scope/);
    // The security requirement a generated client reads names both scopes (the guard's mark).
    const served = buildOpenApiDocument({ title: 'billing', version: 'v1' }, REST_CONTROLLERS, {
      ...OPENAPI_OPTIONS,
    })['paths'] as typeof paths;
    expect(served['/api/v1/account/plan']!['put']).toMatchObject({
      security: [{ 'api-key': ['account', 'plan'] }],
      'x-required-scope': ['account', 'plan'],
    });
  });

  it('declares each path id with the pattern parseId checks it with (QA: clients had a bare string)', () => {
    const schemaOf = (path: string, method: string, name: string) =>
      (
        paths[path]![method]!['parameters'] as {
          name: string;
          in: string;
          schema: { pattern: string };
        }[]
      ).find((p) => p.in === 'path' && p.name === name)!.schema;
    for (const [path, method, name, prefix, other] of [
      ['/api/v1/api-keys/{id}', 'delete', 'id', 'key', 'tok'],
      ['/api/v1/access-tokens/{id}/roll', 'post', 'id', 'tok', 'key'],
      ['/api/v1/admin/accounts/{id}/api-keys/{keyId}', 'delete', 'id', 'acc', 'key'],
      ['/api/v1/admin/accounts/{id}/api-keys/{keyId}', 'delete', 'keyId', 'key', 'acc'],
    ] as const) {
      const pattern = new RegExp(schemaOf(path, method, name).pattern);
      expect([path, name, pattern.test(newId(prefix)), pattern.test(newId(other))]).toEqual([
        path,
        name,
        true,
        false,
      ]);
    }
  });

  it('has a spec (and a body schema where a body is taken) for every route', () => {
    expect(routesWithoutSpec(REST_CONTROLLERS)).toEqual([]);
  });

  it('has a success response schema for every route that answers a body', async () => {
    expect(routesWithoutResponseSchema(REST_CONTROLLERS)).toEqual([]);
    // 26 routes: 23 answer a body, the three DELETEs 204 without one.
    expect(declaredRoutes(REST_CONTROLLERS)).toHaveLength(26);
    const document = buildOpenApiDocument({ title: 'billing', version: 'v1' }, REST_CONTROLLERS);
    // Every reference resolves against the document's root, as client generators read it.
    expect(refsOutsideComponents(document)).toEqual([]);
    expect(await openApiLintErrors(document)).toEqual([]);
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
    // The operator's key list: the account's pages plus state, managed and revoked_at in each.
    expect(paths['/api/v1/admin/accounts/{id}/api-keys']!['get']).toMatchObject({
      security: [{ operator: [] }],
      parameters: expect.arrayContaining([
        expect.objectContaining({ name: 'state', in: 'query' }),
        expect.objectContaining({ name: 'cursor', in: 'query' }),
      ]),
      responses: {
        200: {
          content: {
            'application/json': {
              schema: {
                properties: {
                  items: {
                    items: {
                      required: expect.arrayContaining(['id', 'managed', 'revoked_at']),
                      additionalProperties: false,
                    },
                  },
                },
              },
            },
          },
        },
        404: { description: 'not_found: no account with this id' },
      },
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

  it('declares the Idempotency-Key header and the error answers of the top-ups, the account create and the credential creates (QA)', () => {
    const document = buildOpenApiDocument({ title: 'billing', version: 'v1' }, REST_CONTROLLERS);
    const paths = document['paths'] as Record<string, Record<string, Record<string, unknown>>>;
    const idempotencyKey = expect.objectContaining({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      schema: { type: 'string', pattern: expect.any(String) },
    });
    const error = (code: string) => ({
      description: expect.stringContaining(code),
      content: { 'application/json': { schema: { required: ['error', 'request_id'] } } },
    });
    expect(paths['/api/v1/top-ups']!['post']).toMatchObject({
      parameters: [idempotencyKey],
      responses: {
        400: error('invalid_idempotency_key'),
        403: error('self_service_disabled'),
        409: error('idempotency_key_reused'),
      },
    });
    expect(paths['/api/v1/admin/accounts/{id}/top-ups']!['post']).toMatchObject({
      parameters: expect.arrayContaining([idempotencyKey]),
      responses: { 404: error('not_found'), 409: error('idempotency_key_reused') },
    });
    expect(paths['/api/v1/admin/accounts']!['post']).toMatchObject({
      parameters: [idempotencyKey],
      responses: {
        400: error('invalid_idempotency_key'),
        409: error('idempotency_key_reused'),
      },
    });
    expect(paths['/api/v1/access-tokens']!['post']).toMatchObject({
      parameters: [idempotencyKey],
      responses: {
        400: error('invalid_idempotency_key'),
        409: error('cap_access_tokens_exceeded'),
      },
    });
    // The credential creates (QA: a repeated key made a second credential): a repeat is 409
    // already_created, another body with the key idempotency_key_reused.
    for (const path of ['/api/v1/access-tokens', '/api/v1/api-keys'])
      expect(paths[path]!['post']).toMatchObject({
        parameters: [idempotencyKey],
        responses: {
          400: error('malformed_body'),
          409: {
            description: expect.stringMatching(/already_created.*idempotency_key_reused/s),
          },
        },
      });
    expect(paths['/api/v1/api-keys']!['post']!['responses']).toMatchObject({
      400: error('invalid_idempotency_key'),
    });
    expect(paths['/api/v1/api-keys/{id}']!['delete']!['responses']).toMatchObject({
      403: error('managed_key'),
    });
    expect(paths['/api/v1/admin/accounts/{id}/plan']!['put']!['responses']).toMatchObject({
      400: error('an individual account'),
    });
    // A contract with a plan other than enterprise (QA N): refused on every route that takes one.
    for (const [path, method] of [
      ['/api/v1/admin/accounts/{id}/plan', 'put'],
      ['/api/v1/admin/accounts', 'post'],
      ['/api/v1/admin/accounts/bulk', 'post'],
    ] as const) {
      expect(paths[path]![method]!['responses']).toMatchObject({
        400: error('contract_not_enterprise'),
      });
    }
    expect(paths['/api/v1/admin/accounts/{id}/api-keys']!['post']).toMatchObject({
      security: [{ operator: [] }],
      requestBody: {
        content: {
          'application/json': {
            schema: {
              additionalProperties: false,
              properties: { managed: { type: 'boolean' }, scopes: { type: 'array' } },
            },
          },
        },
      },
      responses: {
        201: {
          content: {
            'application/json': { schema: { required: expect.arrayContaining(['key']) } },
          },
        },
        400: error('malformed_body'),
        404: error('not_found'),
      },
    });
    // The header's pattern is the rule idempotencyKeyOf enforces.
    const [header] = paths['/api/v1/top-ups']!['post']!['parameters'] as Array<{
      schema: { pattern: string };
    }>;
    const pattern = new RegExp(header!.schema.pattern);
    expect(
      ['0d9c6b2e-1f3a-4c57-9a0e-3b1d2f4e5a6c', 'x'.repeat(200)].every((k) => pattern.test(k)),
    ).toBe(true);
    expect(['', 'with space', 'x'.repeat(201)].some((k) => pattern.test(k))).toBe(false);
    // Its 400 says so, on every route that takes the header (QA YY: spaces were not mentioned).
    for (const [path, operations] of Object.entries(paths))
      for (const [method, operation] of Object.entries(operations)) {
        const headers = (operation['parameters'] ?? []) as Array<{ name: string }>;
        if (!headers.some((p) => p.name === 'Idempotency-Key')) continue;
        const responses = operation['responses'] as Record<string, { description: string }>;
        expect([method, path, responses[400]!.description]).toEqual([
          method,
          path,
          expect.stringMatching(/invalid_idempotency_key: .*1 to 200 .*without spaces/),
        ]);
      }
  });
});

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
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EVM_ADDRESS_PATTERN } from '@meridian/networks';
import { normalizeFilter } from '@meridian/webhooks';
import { undeclaredBodies } from '../test/support/declared-bodies';
import { REST_CONTROLLERS } from './app.module';
import { checkEventId, checkId, newId } from './http/ids';
import { parseBody } from './http/validation';
import { chainAndNetwork, WEBHOOK_NETWORKS } from './webhooks/networks';
import { createWebhookBody, patchWebhookBody } from './webhooks/webhook.schemas';

describe('webhook-matcher OpenAPI', () => {
  it('has a spec (and a body schema where a body is taken) for every route', () => {
    expect(routesWithoutSpec(REST_CONTROLLERS)).toEqual([]);
  });

  it('has a success response schema for every route that answers a body', async () => {
    expect(routesWithoutResponseSchema(REST_CONTROLLERS)).toEqual([]);
    // 25 routes: 24 answer a body, DELETE /address-lists/{id} is 204 without one.
    expect(declaredRoutes(REST_CONTROLLERS)).toHaveLength(25);
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
    // The filter tree is recursive: zod puts it under the answer's $defs, and the builder moves
    // it to components/schemas, so OpenAPI tools resolve its references (QA: openapi-typescript).
    const created = schemaOf('/api/v1/webhooks', 'post', 201)!;
    expect(created).toMatchObject({
      required: expect.arrayContaining(['id', 'status', 'status_label', 'filters', 'secret']),
      properties: {
        status: { enum: expect.arrayContaining(['active', 'paused_no_balance']) },
        filters: { anyOf: [{ $ref: '#/components/schemas/Filters' }, { type: 'null' }] },
      },
    });
    expect(JSON.stringify(document)).not.toMatch(/"\$(id|defs)"/);
    // One component for the tree of every answer (GET, PATCH, POST, the pages), all resolved.
    for (const [path, method, status] of [
      ['/api/v1/webhooks/{id}', 'get', 200],
      ['/api/v1/webhooks/{id}', 'patch', 200],
      ['/api/v1/webhooks/{id}/secret/rotate', 'post', 200],
    ] as const)
      expect(JSON.stringify(schemaOf(path, method, status))).toContain(
        '"filters":{"anyOf":[{"$ref":"#/components/schemas/Filters"}',
      );
    expect(refsOutsideComponents(document)).toEqual([]);
    expect(await openApiLintErrors(document)).toEqual([]);
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
    // The dashboard's search of a list asks ?prefix= (it used to read the cursor as one).
    expect(paths['/api/v1/address-lists/{id}/entries']!['get']).toMatchObject({
      parameters: expect.arrayContaining([
        expect.objectContaining({
          name: 'prefix',
          in: 'query',
          required: false,
          schema: expect.objectContaining({ pattern: '^0x[0-9a-fA-F]{1,40}$' }),
        }),
      ]),
      responses: { 400: { description: expect.stringContaining('invalid_prefix') } },
    });
    expect(paths['/api/v1/admin/accounts/{id}/webhooks']!['get']).toMatchObject({
      security: [{ operator: [] }],
    });
    // The operator's read of a log: the customer's query and 400s, the operator token's 401.
    const log = paths['/api/v1/admin/accounts/{id}/webhooks/{webhookId}/deliveries']!['get']!;
    expect(log).toMatchObject({
      security: [{ operator: [] }],
      responses: {
        400: { description: expect.stringContaining('invalid_query') },
        401: { description: expect.stringContaining('operator token') },
        404: { description: expect.stringContaining('not_found') },
      },
    });
    expect(
      (log['parameters'] as { name: string; in: string }[])
        .filter((p) => p.in === 'query')
        .map((p) => p.name),
    ).toEqual(expect.arrayContaining(['outcome', 'since', 'until', 'tx_hash', 'block_number']));
    expect(log['responses']).not.toHaveProperty('403');
  });

  const document = buildOpenApiDocument({ title: 'webhooks', version: 'v1' }, REST_CONTROLLERS, {
    apiKeyScope: 'webhooks',
  });
  const paths = document['paths'] as Record<string, Record<string, Record<string, unknown>>>;
  const pathSchema = (path: string, method: string, name: string) =>
    (
      paths[path]![method]!['parameters'] as {
        name: string;
        in: string;
        schema: { pattern: string };
      }[]
    ).find((p) => p.in === 'path' && p.name === name)!.schema;

  it('declares each path id with the pattern the route checks it with (QA: clients had a bare string)', () => {
    const webhookId = pathSchema('/api/v1/webhooks/{id}/secret/rotate', 'post', 'id');
    const listId = pathSchema('/api/v1/address-lists/{id}/entries', 'put', 'id');
    const eventId = pathSchema(
      '/api/v1/webhooks/{id}/deliveries/{eventId}/replay',
      'post',
      'eventId',
    );
    const accepts = (schema: { pattern: string }, id: string) =>
      new RegExp(schema.pattern).test(id);
    // The declared pattern accepts what checkId accepts and refuses what it refuses.
    for (const [schema, good, bad] of [
      [webhookId, newId('wh'), newId('al')],
      [listId, newId('al'), newId('wh')],
      [eventId, `ev_${'0'.repeat(32)}`, `ev_${'0'.repeat(31)}`],
    ] as const) {
      expect([accepts(schema, good), accepts(schema, bad)]).toEqual([true, false]);
    }
    expect(checkId('wh', newId('wh'))).toMatch(/^wh_/);
    expect(() => checkEventId(`ev_${'0'.repeat(31)}`)).toThrow();
    expect(pathSchema('/api/v1/admin/accounts/{id}/webhooks', 'get', 'id').pattern).toBe(
      '^acc_[0-9a-f]{24}$',
    );
  });

  it('declares the bodies a route may go without as optional (QA: POST …/secret/rotate)', () => {
    expect(paths['/api/v1/webhooks/{id}/secret/rotate']!['post']!['requestBody']).toMatchObject({
      required: false,
      content: { 'application/json': { schema: { properties: { expire_previous: {} } } } },
    });
    expect(paths['/api/v1/webhooks']!['post']!['requestBody']).toMatchObject({ required: true });
  });

  it('declares every error status of every route, not only under default (QA)', () => {
    expect(operationsWithUndeclaredErrors(document)).toEqual([]);
    const responses = (path: string, method: string) =>
      paths[path]![method]!['responses'] as Record<string, { description: string }>;
    expect(responses('/api/v1/webhooks', 'get')).toMatchObject({
      400: { description: expect.stringContaining('invalid_cursor') },
      401: { description: expect.stringContaining('unauthorized') },
      403: { description: expect.stringContaining('insufficient_scope') },
      503: { description: expect.stringContaining('credentials_unavailable') },
    });
    // A route's own 403 keeps its code beside the guard's.
    expect(responses('/api/v1/webhooks', 'post')[403]!.description).toMatch(
      /insufficient_scope.*plan_required/,
    );
    expect(responses('/api/v1/address-lists/{id}', 'get')).toMatchObject({
      400: { description: expect.stringContaining('invalid_id') },
      404: { description: expect.stringContaining('not_found') },
    });
  });
});

describe('webhook-matcher OpenAPI: request bodies and error answers as the routes take them', () => {
  const document = buildOpenApiDocument({ title: 'webhooks', version: 'v1' }, REST_CONTROLLERS);
  const paths = document['paths'] as Record<string, Record<string, Record<string, unknown>>>;
  const operation = (path: string, method: string) => paths[`/api/v1${path}`]![method]!;
  const LIST = 'al_' + 'a'.repeat(24);
  const WH = 'wh_' + 'b'.repeat(24);
  const ADDRESS = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
  const post = (path: string, body: unknown) => ({ method: 'POST', path: `/api/v1${path}`, body });
  const patch = (body: unknown) => ({ method: 'PATCH', path: `/api/v1/webhooks/${WH}`, body });

  /** The route's own checks (parseBody, chainAndNetwork, normalizeFilter) accept the body. */
  const routeAccepts = (body: Record<string, unknown>, create: boolean) => {
    const parsed = parseBody(create ? createWebhookBody : patchWebhookBody, body);
    if (create) chainAndNetwork(parsed.chain, parsed.network!, WEBHOOK_NETWORKS);
    normalizeFilter({ ...parsed, addresses: parsed.addresses ?? (create ? undefined : [ADDRESS]) });
    return true;
  };

  it('declares typed filters, addresses, list_refs and the network enum of the answer', () => {
    for (const [path, method] of [
      ['/webhooks', 'post'],
      ['/webhooks/{id}', 'patch'],
    ] as const) {
      const body = (
        operation(path, method)['requestBody'] as {
          content: Record<string, { schema: { properties: Record<string, unknown> } }>;
        }
      ).content['application/json']!.schema.properties;
      for (const field of ['filters', 'addresses', 'list_refs'])
        expect(JSON.stringify(body[field])).toMatch(/"type":"array"|"\$ref"/);
      // The same enum as the answer's network (WEBHOOK_NETWORKS).
      expect(body['network']).toMatchObject({ enum: [...WEBHOOK_NETWORKS] });
      expect(body['addresses']).toMatchObject({
        anyOf: expect.arrayContaining([
          {
            type: 'array',
            items: expect.objectContaining({ pattern: EVM_ADDRESS_PATTERN.source }),
          },
        ]),
      });
    }
    const created = (
      operation('/webhooks', 'post')['responses'] as Record<
        string,
        { content: Record<string, { schema: Record<string, unknown> }> }
      >
    )[201]!.content['application/json']!.schema;
    expect(JSON.stringify(created)).toContain(
      JSON.stringify({ enum: [...WEBHOOK_NETWORKS] }).slice(1, -1),
    );
  });

  it('accepts in the document every body of the README walkthrough and of a corpus the routes accept, and refuses what is not a filter', () => {
    // The root README's walkthrough (its shell variables given values).
    const readme = readFileSync(join(__dirname, '../../../README.md'), 'utf8');
    const walkthrough = [
      ...readme.matchAll(
        /-X POST "\$W\/(webhooks|address-lists)"[^\n]*\n\s*-d (?:'([^']*)'|"((?:[^"\\]|\\.)*)")/g,
      ),
    ].map(([, route, single, double]) =>
      post(
        `/${route}`,
        JSON.parse(single ?? double!.replace(/\\"/g, '"').replace('$L', LIST)) as unknown,
      ),
    );
    expect(walkthrough.map((r) => r.path)).toEqual(['/api/v1/address-lists', '/api/v1/webhooks']);
    const base = {
      network: 'eth-mainnet',
      trigger_type: 'address_activity',
      target_url: 'https://example.com/hook',
    };
    const creates: Record<string, unknown>[] = [
      { ...base, addresses: [ADDRESS.toLowerCase(), ADDRESS.toUpperCase().replace('0X', '0x')] },
      { ...base, chain: 'ethereum', name: null, list_refs: [LIST], addresses: null },
      { ...base, network: 'opbnb-testnet', filters: null, addresses: [ADDRESS] },
      {
        ...base,
        trigger_type: 'log_event',
        confirm_depth: 2,
        phases: ['confirmed'],
        filters: {
          all: [
            { contract: { in: [ADDRESS] } },
            { topic: { position: 0, in: ['0x' + 'Dd'.repeat(32)] } },
            {
              any: [{ address: { dir: 'out', in: [ADDRESS] } }, { address: { list_refs: [LIST] } }],
            },
            { not: { address: { dir: 'in', in: [ADDRESS], list_refs: [] } } },
          ],
        },
      },
      {
        ...base,
        trigger_type: 'tx_confirmation',
        filters: { tx_hash: { in: ['0x' + 'ab'.repeat(32)] } },
      },
    ];
    const patches: Record<string, unknown>[] = [
      { name: 'renamed' },
      { chain: 'ethereum', network: 'eth-mainnet', trigger_type: 'address_activity' },
      { filters: null, addresses: [ADDRESS] },
      { list_refs: [LIST], confirm_depth: 96, target_url: 'https://example.com/other' },
    ];
    for (const body of creates) expect(routeAccepts(body, true)).toBe(true);
    for (const body of patches) expect(routeAccepts(body, false)).toBe(true);
    expect(
      undeclaredBodies(document, [
        ...walkthrough,
        ...creates.map((body) => post('/webhooks', body)),
        ...patches.map(patch),
        // The action routes take no body; {} is taken as none.
        post(`/webhooks/${WH}/pause`, undefined),
        post(`/webhooks/${WH}/resume`, {}),
        post(`/webhooks/${WH}/test`, undefined),
        post(`/webhooks/${WH}/deliveries/ev_${'0'.repeat(32)}/replay`, {}),
        post(`/webhooks/${WH}/secret/rotate`, { expire_previous: true }),
      ]),
    ).toEqual([]);
    // What the old document let through as `unknown`: now refused by the declared schema.
    expect(
      undeclaredBodies(document, [
        post('/webhooks', { ...base, filters: { address: ADDRESS } }),
        post('/webhooks', { ...base, addresses: [1] }),
        post('/webhooks', { ...base, list_refs: 'al_x' }),
        post('/webhooks', { ...base, network: 'sui-mainnet', addresses: [ADDRESS] }),
        patch({ filters: { all: [], any: [] } }),
      ]),
    ).toHaveLength(5);
  });

  it('declares the error statuses each webhook route answers, with their codes and members', () => {
    const responses = (path: string, method: string) =>
      operation(path, method)['responses'] as Record<
        string,
        { description: string; content?: Record<string, { schema: Record<string, unknown> }> }
      >;
    const statuses = (path: string, method: string) =>
      Object.keys(responses(path, method)).filter((s) => s !== 'default');
    const schema = (path: string, method: string, status: number) =>
      responses(path, method)[status]!.content!['application/json']!.schema;
    expect(statuses('/webhooks', 'post').sort()).toEqual(
      ['201', '400', '401', '403', '409', '413', '415', '503'].sort(),
    );
    expect(responses('/webhooks', 'post')[403]!.description).toContain('plan_required');
    expect(responses('/webhooks', 'post')[413]!.description).toContain('request_too_large');
    expect(responses('/webhooks', 'post')[400]!.description).toEqual(
      expect.stringContaining('invalid_address_checksum'),
    );
    for (const code of ['cap_active_webhooks_exceeded', 'idempotency_key_reused'])
      expect(responses('/webhooks', 'post')[409]!.description).toContain(code);
    expect(schema('/webhooks', 'post', 409)).toMatchObject({
      required: expect.arrayContaining(['error', 'request_id']),
      properties: { cap: { type: 'string' }, limit: { type: 'integer' }, requested: {} },
    });
    expect(statuses('/webhooks/{id}', 'patch').sort()).toEqual(
      ['200', '400', '401', '403', '404', '409', '412', '413', '415', '503'].sort(),
    );
    expect(responses('/webhooks/{id}', 'patch')[400]!.description).toContain('immutable_field');
    // ETag and If-Match (ADR 0404): 412 version_mismatch with details.currentVersion, 400
    // invalid_if_match, on PATCH, DELETE, pause and resume; the ETag on every answer of one
    // webhook.
    for (const [path, method] of [
      ['/webhooks/{id}', 'patch'],
      ['/webhooks/{id}', 'delete'],
      ['/webhooks/{id}/pause', 'post'],
      ['/webhooks/{id}/resume', 'post'],
    ] as const) {
      expect(responses(path, method)[412]!.description).toContain('version_mismatch');
      expect(responses(path, method)[400]!.description).toContain('invalid_if_match');
      expect(schema(path, method, 412)).toMatchObject({
        properties: { details: { properties: { currentVersion: { type: 'integer' } } } },
      });
      const parameters = operation(path, method)['parameters'] as {
        name: string;
        in: string;
      }[];
      expect(parameters).toContainEqual(
        expect.objectContaining({ name: 'If-Match', in: 'header' }),
      );
    }
    for (const [path, method, status] of [
      ['/webhooks', 'post', 201],
      ['/webhooks/{id}', 'get', 200],
      ['/webhooks/{id}', 'patch', 200],
      ['/webhooks/{id}', 'delete', 200],
      ['/webhooks/{id}/pause', 'post', 200],
      ['/webhooks/{id}/resume', 'post', 200],
      ['/webhooks/{id}/secret/rotate', 'post', 200],
    ] as const)
      expect(
        Object.keys(
          (responses(path, method)[status] as unknown as { headers: Record<string, unknown> })
            .headers,
        ),
      ).toContain('ETag');
    for (const method of ['get', 'delete'])
      expect(responses('/webhooks/{id}', method)[400]!.description).toContain('invalid_id');
    expect(responses('/webhooks/{id}/resume', 'post')[409]!.description).toContain(
      'insufficient_balance',
    );
    expect(responses('/webhooks/{id}/test', 'post')[409]!.description).toContain(
      'webhook_not_active',
    );
    expect(responses('/webhooks/{id}/secret/rotate', 'post')[409]!.description).toContain(
      'too_many_previous_secrets',
    );
    expect(schema('/webhooks/{id}/secret/rotate', 'post', 409)).toMatchObject({
      properties: {
        previous_secrets_expire_at: { type: 'array' },
        next_rotation_at: { type: 'string' },
      },
    });
    expect(
      responses('/webhooks/{id}/deliveries/{eventId}/replay', 'post')[409]!.description,
    ).toContain('webhook_not_active');
    expect(responses('/address-lists/{id}', 'delete')[409]!.description).toContain('list_in_use');
    expect(schema('/address-lists/{id}', 'delete', 409)).toMatchObject({
      properties: { webhook_ids: { type: 'array' } },
    });
  });

  it('declares no body on the action routes that take none', () => {
    for (const path of [
      '/webhooks/{id}/pause',
      '/webhooks/{id}/resume',
      '/webhooks/{id}/test',
      '/webhooks/{id}/deliveries/{eventId}/replay',
    ])
      expect(operation(path, 'post')['requestBody']).toBeUndefined();
  });
});

import 'reflect-metadata';
import { Body, Controller, Delete, Get, Param, Post, Put, Query } from '@nestjs/common';
import { z } from 'zod';
import { DATABASE_UNAVAILABLE_DESCRIPTION } from '../database-unavailable';
import { ApiRoute, RequiresScope } from './api-route.decorator';
import { buildOpenApiDocument, NO_QUERY_DESCRIPTION } from './openapi-document';
import { renderReferencePage } from './reference-page';
import { operationsWithUndeclaredErrors } from './declared-errors';
import { routesWithoutSpec } from './routes';
import { refsOutsideComponents, SchemaComponents } from './schema-components';

const createBody = z.strictObject({ name: z.string().min(1), size: z.number().int().default(1) });
const listQuery = z.strictObject({ limit: z.coerce.number().int().min(1).max(200).optional() });
const thing = z.object({ id: z.string(), name: z.string() });
/** The one home of the id rule: the route checks with it and the document shows it. */
const thingId = z
  .string()
  .regex(/^th_[0-9a-f]{8}$/)
  .describe('th_ and 8 hex');
const renameBody = z.strictObject({ name: z.string().optional() });

@Controller('api/v1/things')
class DescribedController {
  @Post()
  @ApiRoute({
    summary: 'Create a thing',
    body: createBody,
    responses: { 201: { description: 'created', schema: thing } },
  })
  create(@Body() _body: unknown) {}

  @Get()
  @ApiRoute({ summary: 'List things', query: listQuery })
  list(@Query() _query: unknown) {}

  @Post(':id/rename')
  @RequiresScope('renames')
  @ApiRoute({
    summary: 'Rename a thing; the body may be left out',
    body: renameBody,
    bodyOptional: true,
    params: { id: thingId },
    responses: { 200: { description: 'renamed', schema: thing }, 400: { description: 'x' } },
  })
  rename(@Param('id') _id: string, @Body() _body: unknown) {}

  @Delete(':id')
  @ApiRoute({
    summary: 'Delete a thing',
    auth: 'operator',
    params: { id: thingId },
    headers: {
      'Idempotency-Key': { description: 'retry key', schema: z.string().min(1).max(200) },
    },
    responses: {
      204: { description: 'gone' },
      409: { description: 'thing_busy: someone holds it' },
    },
  })
  remove(@Param('id') _id: string) {}
}

@Controller('api/v1/other')
class UndescribedController {
  @Get()
  list() {}

  @Put(':id')
  @ApiRoute({ summary: 'Replace, but the body schema was forgotten' })
  replace() {}

  @Get(':id')
  @ApiRoute({ summary: 'One, but the id schema was forgotten' })
  one() {}

  @Post('ping')
  @ApiRoute({ summary: 'No body on purpose', noBody: true, auth: 'none' })
  ping() {}
}

/** A recursive tree (zod puts it under the answer's own `$defs`) and a schema named by `id`. */
interface Node {
  all?: Node[];
  leaf?: string;
}
const node: z.ZodType<Node> = z.lazy(() =>
  z.union([z.strictObject({ all: z.array(node) }), z.strictObject({ leaf: z.string() })]),
);
const owner = z.strictObject({ name: z.string() }).meta({ id: 'Owner' });
const tree = z.strictObject({ filters: node.nullable(), owner }).meta({ $id: 'urn:test:tree' });
const treeInput = z.strictObject({ filters: node.optional(), note: z.string().default('') });
interface Folder {
  name: string;
  children: Folder[];
}
const folder: z.ZodType<Folder> = z.strictObject({
  name: z.string(),
  get children() {
    return z.array(folder);
  },
});

@Controller('v1/trees')
class TreeController {
  @Get(':id')
  @ApiRoute({
    summary: 'A tree',
    responses: {
      200: { description: 'the tree', schema: tree },
      429: { description: 'rate_limited' },
      405: { description: 'not this method' },
    },
  })
  get() {}

  @Put(':id')
  @ApiRoute({
    summary: 'Replace a tree',
    body: treeInput,
    responses: {
      200: {
        description: 'the tree',
        schema: tree,
        headers: { 'Idempotent-Replayed': { description: 'true on a replay' } },
      },
      503: { description: 'unavailable' },
    },
  })
  replace() {}

  @Get(':id/folder')
  @ApiRoute({ summary: 'Its folder', responses: { 200: { description: 'ok', schema: folder } } })
  folder() {}
}

describe('OpenAPI of recursive and named schemas', () => {
  const document = buildOpenApiDocument({ title: 'Trees', version: '1' }, [TreeController]);
  const paths = document['paths'] as Record<string, Record<string, Record<string, unknown>>>;
  const components = document['components'] as Record<string, Record<string, unknown>>;
  const answer = (path: string, method: string, status = 200) =>
    (
      paths[path]![method]!['responses'] as Record<
        string,
        { content: Record<string, { schema: Record<string, unknown> }> }
      >
    )[status]!.content['application/json']!.schema;

  it('hoists every $defs into components/schemas and refers to it from the root (QA: openapi-typescript)', () => {
    const json = JSON.stringify(document);
    expect(json).not.toContain('$defs');
    expect(json).not.toContain('$id');
    expect(refsOutsideComponents(document)).toEqual([]);
    // zod's made-up name (__schema0) gives way to the property holding it; an id stays.
    expect(answer('/v1/trees/{id}', 'get')).toMatchObject({
      properties: {
        filters: { anyOf: [{ $ref: '#/components/schemas/Filters' }, { type: 'null' }] },
        owner: { $ref: '#/components/schemas/Owner' },
      },
    });
    expect(components['schemas']!['Filters']).toMatchObject({
      anyOf: [
        { properties: { all: { items: { $ref: '#/components/schemas/Filters' } } } },
        { properties: { leaf: { type: 'string' } } },
      ],
    });
    // A schema that refers to itself (`#`) is a component as a whole.
    expect(answer('/v1/trees/{id}/folder', 'get')).toEqual({
      $ref: '#/components/schemas/TreeFolder200',
    });
    expect(components['schemas']!['TreeFolder200']).toMatchObject({
      properties: { children: { items: { $ref: '#/components/schemas/TreeFolder200' } } },
    });
  });

  it('adds an identical schema once, whichever operation brings it', () => {
    // Both answers (and the request body's tree, identical here) share one component each.
    expect(Object.keys(components['schemas']!).sort()).toEqual([
      'Filters',
      'Owner',
      'TreeFolder200',
    ]);
    expect(answer('/v1/trees/{id}', 'put')).toEqual(answer('/v1/trees/{id}', 'get'));
    expect(paths['/v1/trees/{id}']!['put']!['requestBody']).toMatchObject({
      content: {
        'application/json': {
          schema: { properties: { filters: { $ref: '#/components/schemas/Filters' } } },
        },
      },
    });
  });

  it('names a different schema under a taken name apart', () => {
    const components = new SchemaComponents();
    const first = z.toJSONSchema(z.strictObject({ filters: node }), { io: 'output' });
    const other: z.ZodType<Node> = z.lazy(() =>
      z.union([
        z.strictObject({ all: z.array(other).min(1) }),
        z.strictObject({ leaf: z.string() }),
      ]),
    );
    const second = z.toJSONSchema(z.strictObject({ filters: other }), { io: 'input' });
    components.add(first as Record<string, unknown>, 'A.get.200', 'output');
    expect(components.add(second as Record<string, unknown>, 'A.put.body', 'input')).toEqual(
      expect.objectContaining({
        properties: { filters: { $ref: '#/components/schemas/FiltersInput' } },
      }),
    );
    expect(Object.keys(components.schemas)).toEqual(['Filters', 'FiltersInput']);
  });

  it('declares X-Request-Id on every answer, Retry-After on 429 and 503, Allow on 405', () => {
    const headersOf = (method: string, status: string) =>
      Object.keys(
        (paths['/v1/trees/{id}']![method]!['responses'] as Record<string, { headers: object }>)[
          status
        ]!.headers,
      ).sort();
    expect(headersOf('get', '200')).toEqual(['X-Request-Id']);
    expect(headersOf('get', '429')).toEqual(['Retry-After', 'X-Request-Id']);
    expect(headersOf('get', '405')).toEqual(['Allow', 'X-Request-Id']);
    expect(headersOf('put', '503')).toEqual(['Retry-After', 'X-Request-Id']);
    expect(headersOf('get', 'default')).toEqual(['X-Request-Id']);
    // A route's own answer header, beside the shared one.
    expect(headersOf('put', '200')).toEqual(['Idempotent-Replayed', 'X-Request-Id']);
    expect(Object.keys(components['headers']!).sort()).toEqual([
      'Allow',
      'Retry-After',
      'X-Request-Id',
    ]);
    expect(document['tags']).toEqual([{ name: 'trees' }]);
  });

  it('lists the components on the reference page', () => {
    const page = renderReferencePage(document);
    expect(page).toContain('<details id="schema-Filters">');
    expect(page).toContain('<code>#/components/schemas/TreeFolder200</code>');
  });

  it("lists the app's API-key scope on its api-key routes", () => {
    const scoped = buildOpenApiDocument({ title: 'Things', version: '1' }, [DescribedController], {
      apiKeyScope: 'things',
    });
    const ops = scoped['paths'] as Record<string, Record<string, Record<string, unknown>>>;
    expect(ops['/api/v1/things']!['post']).toMatchObject({
      security: [{ 'api-key': ['things'] }],
      'x-required-scope': 'things',
    });
    expect(ops['/api/v1/things/{id}']!['delete']).toMatchObject({ security: [{ operator: [] }] });
    expect(ops['/api/v1/things/{id}']!['delete']).not.toHaveProperty('x-required-scope');
    // A route's own scope (RequiresScope), from the mark its guard reads: the key needs both.
    expect(ops['/api/v1/things/{id}/rename']!['post']).toMatchObject({
      security: [{ 'api-key': ['things', 'renames'] }],
      'x-required-scope': ['things', 'renames'],
    });
  });

  it('declares 503 database_unavailable on every operation of an app on Postgres', () => {
    const onDatabase = buildOpenApiDocument(
      { title: 'Things', version: '1' },
      [DescribedController, TreeController],
      { database: true },
    );
    const ops = onDatabase['paths'] as Record<
      string,
      Record<string, { responses: Record<string, { description: string; headers: object }> }>
    >;
    const unavailable = Object.values(ops).flatMap((methods) =>
      Object.values(methods).map((operation) => operation.responses['503']),
    );
    expect(unavailable.length).toBeGreaterThan(3);
    for (const response of unavailable) {
      expect(response?.description).toMatch(/database_unavailable: .*Retry-After/);
      expect(Object.keys(response!.headers).sort()).toEqual(['Retry-After', 'X-Request-Id']);
    }
    // Beside a route's own 503 codes, not instead of them.
    expect(ops['/v1/trees/{id}']!['put']!.responses['503']!.description).toBe(
      `unavailable; ${DATABASE_UNAVAILABLE_DESCRIPTION}`,
    );
    const without = buildOpenApiDocument({ title: 'Things', version: '1' }, [DescribedController]);
    expect(
      (without['paths'] as typeof ops)['/api/v1/things']!['get']!.responses,
    ).not.toHaveProperty('503');
  });

  it('names a reference that points nowhere or outside the components', () => {
    expect(
      refsOutsideComponents({
        paths: { '/a': { get: { schema: { $ref: '#/$defs/__schema0' } } } },
        components: { schemas: { A: { $ref: '#/components/schemas/B' } } },
      }).sort(),
    ).toEqual(['#/$defs/__schema0', '#/components/schemas/B']);
  });
});

type Json = Record<string, unknown>;

describe('OpenAPI from the routes and their zod schemas', () => {
  const document = buildOpenApiDocument({ title: 'Things', version: '1' }, [DescribedController]);
  const paths = document['paths'] as Record<string, Record<string, Record<string, unknown>>>;

  it('describes each route with its path parameters, query, body and responses', () => {
    expect(Object.keys(paths).sort()).toEqual([
      '/api/v1/things',
      '/api/v1/things/{id}',
      '/api/v1/things/{id}/rename',
    ]);
    expect(paths['/api/v1/things']!['post']).toMatchObject({
      summary: 'Create a thing',
      requestBody: {
        content: {
          'application/json': {
            schema: {
              type: 'object',
              properties: { name: { type: 'string', minLength: 1 }, size: { type: 'integer' } },
              required: ['name'],
              additionalProperties: false,
            },
          },
        },
      },
      responses: {
        201: { content: { 'application/json': { schema: { required: ['id', 'name'] } } } },
      },
      security: [{ 'api-key': [] }],
    });
    expect(paths['/api/v1/things']!['get']!['parameters']).toEqual([
      {
        name: 'limit',
        in: 'query',
        required: false,
        schema: { type: 'integer', minimum: 1, maximum: 200 },
      },
    ]);
    expect(paths['/api/v1/things/{id}']!['delete']).toMatchObject({
      parameters: [
        {
          name: 'id',
          in: 'path',
          required: true,
          schema: { type: 'string', pattern: '^th_[0-9a-f]{8}$', description: 'th_ and 8 hex' },
        },
        {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description: 'retry key',
          schema: { type: 'string', minLength: 1, maxLength: 200 },
        },
      ],
      security: [{ operator: [] }],
      responses: {
        // A declared error status carries the error body, like `default`.
        409: {
          description: 'thing_busy: someone holds it',
          content: { 'application/json': { schema: { required: ['error', 'request_id'] } } },
        },
      },
    });
    expect(paths['/api/v1/things/{id}']!['delete']!['responses']).not.toHaveProperty('204.content');
    expect(document['components']).toEqual({
      schemas: {},
      headers: { 'X-Request-Id': expect.objectContaining({ schema: { type: 'string' } }) },
      securitySchemes: { 'api-key': expect.any(Object), operator: expect.any(Object) },
    });
  });

  it('declares a body the route may go without as not required (QA: POST …/secret/rotate)', () => {
    expect(paths['/api/v1/things/{id}/rename']!['post']!['requestBody']).toMatchObject({
      required: false,
    });
    expect(paths['/api/v1/things']!['post']!['requestBody']).toMatchObject({ required: true });
  });

  it('names every operation whose errors are declared only under default', () => {
    expect(operationsWithUndeclaredErrors(document).sort()).toEqual([
      'DELETE /api/v1/things/{id}: 401 (authenticates)',
      'GET /api/v1/things: 401 (authenticates), 400 (validates its body or query)',
      'POST /api/v1/things/{id}/rename: 401 (authenticates)',
      'POST /api/v1/things: 401 (authenticates)',
    ]);
    const ping = buildOpenApiDocument({ title: 't', version: '1' }, [UndescribedController]);
    expect(operationsWithUndeclaredErrors(ping)).not.toContainEqual(
      expect.stringContaining('/ping'),
    );
  });

  it('declares 400 invalid_query on every operation whose route declares no query (one rule: UndeclaredQueryInterceptor)', () => {
    const responsesOf = (path: string, method: string) =>
      paths[path]![method]!['responses'] as Record<
        string,
        { description: string; content?: Record<string, { schema: Json }> }
      >;
    // No 400 of its own: the line alone, with the error body and where the query was refused.
    for (const [path, method] of [
      ['/api/v1/things', 'post'],
      ['/api/v1/things/{id}', 'delete'],
    ] as const) {
      const refused = responsesOf(path, method)['400']!;
      expect(refused.description).toBe(NO_QUERY_DESCRIPTION);
      expect(refused.content!['application/json']!.schema).toMatchObject({
        type: 'object',
        properties: { error: {}, request_id: {}, location: {}, path: {} },
        required: ['error', 'request_id'],
      });
    }
    // A 400 of its own: the line after its codes.
    expect(responsesOf('/api/v1/things/{id}/rename', 'post')['400']!.description).toBe(
      `x; ${NO_QUERY_DESCRIPTION}`,
    );
    // A route with a query names its own codes (and has none here): nothing added.
    expect(responsesOf('/api/v1/things', 'get')).not.toHaveProperty('400');
    // A 400 that names invalid_query already is kept as it is.
    @Controller('v1/own')
    class OwnQueryRuleController {
      @Get()
      @ApiRoute({
        summary: 'Its own rule',
        responses: { 400: { description: 'invalid_query: any query parameter' } },
      })
      get() {}
    }
    const own = buildOpenApiDocument({ title: 't', version: '1' }, [OwnQueryRuleController]);
    expect(
      (own['paths'] as typeof paths)['/v1/own']!['get']!['responses'] as Record<string, Json>,
    ).toMatchObject({ 400: { description: 'invalid_query: any query parameter' } });
  });

  it('declares the 413 (with the body limit) and 415 the framework answers any body-taking route', () => {
    for (const [path, method] of [
      ['/api/v1/things', 'post'],
      ['/api/v1/things/{id}/rename', 'post'],
    ] as const) {
      const responses = paths[path]![method]!['responses'] as Record<string, Json>;
      expect(responses['413']).toMatchObject({
        description: 'request_too_large: the body is over 5 MiB (5242880 bytes)',
        content: { 'application/json': expect.any(Object) },
      });
      expect(responses['415']!['description']).toMatch(/^unsupported_media_type: /);
    }
    // A route that takes no body answers neither before its handler runs: none declared.
    expect(paths['/api/v1/things/{id}']!['delete']!['responses']).not.toHaveProperty('413');
    expect(paths['/api/v1/things/{id}']!['delete']!['responses']).not.toHaveProperty('415');
    const small = buildOpenApiDocument({ title: 't', version: '1' }, [DescribedController], {
      bodyLimitBytes: 64 * 1024,
    });
    expect(
      (small['paths'] as Record<string, Record<string, Json>>)['/api/v1/things']!['post']![
        'responses'
      ],
    ).toMatchObject({
      413: { description: 'request_too_large: the body is over 64 KiB (65536 bytes)' },
    });
  });

  it('names a body-taking operation without its 413 and 415 (QA: documents before the builder added them)', () => {
    const old = structuredClone(document) as { paths: Record<string, Record<string, Json>> };
    const responses = old.paths['/api/v1/things']!['post']!['responses'] as Record<string, Json>;
    delete responses['413'];
    delete responses['415'];
    expect(operationsWithUndeclaredErrors(old)).toContainEqual(
      'POST /api/v1/things: 401 (authenticates), 413 and 415 (takes a body)',
    );
  });

  it('serves the paths from the origin, tags them and declares the shared response headers', () => {
    // The paths carry the whole prefix, so the server is the origin (not a base ending in /v1).
    expect(document['servers']).toEqual([{ url: '/', description: expect.any(String) }]);
    expect(paths['/api/v1/things']!['post']!['tags']).toEqual(['things']);
    expect(document['tags']).toEqual([{ name: 'things' }]);
    const responses = paths['/api/v1/things/{id}']!['delete']!['responses'] as Record<
      string,
      { headers: Record<string, unknown> }
    >;
    for (const response of Object.values(responses))
      expect(response.headers['X-Request-Id']).toEqual({
        $ref: '#/components/headers/X-Request-Id',
      });
  });

  it('names every route that has no spec, a body or a path parameter without its schema', () => {
    expect(routesWithoutSpec([DescribedController])).toEqual([]);
    expect(routesWithoutSpec([UndescribedController]).sort()).toEqual([
      'GET /api/v1/other (UndescribedController.list)',
      'GET /api/v1/other/{id} (UndescribedController.one)',
      'PUT /api/v1/other/{id} (UndescribedController.replace)',
    ]);
  });

  it('renders a reference page with every operation, escaped', () => {
    const page = renderReferencePage(
      buildOpenApiDocument({ title: 'A <b>title</b>', version: '1' }, [DescribedController]),
    );
    expect(page).toContain('A &#60;b&#62;title&#60;/b&#62;');
    expect(page.match(/<section class="op"/g)).toHaveLength(4);
    expect(page).toContain('<code>/api/v1/things/{id}</code>');
  });
});

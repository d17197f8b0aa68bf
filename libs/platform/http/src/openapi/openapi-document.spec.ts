import 'reflect-metadata';
import { Body, Controller, Delete, Get, Param, Post, Put, Query } from '@nestjs/common';
import { z } from 'zod';
import { ApiRoute } from './api-route.decorator';
import { buildOpenApiDocument } from './openapi-document';
import { renderReferencePage } from './reference-page';
import { routesWithoutSpec } from './routes';

const createBody = z.strictObject({ name: z.string().min(1), size: z.number().int().default(1) });
const listQuery = z.strictObject({ limit: z.coerce.number().int().min(1).max(200).optional() });
const thing = z.object({ id: z.string(), name: z.string() });

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

  @Delete(':id')
  @ApiRoute({
    summary: 'Delete a thing',
    auth: 'operator',
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

  @Post('ping')
  @ApiRoute({ summary: 'No body on purpose', noBody: true, auth: 'none' })
  ping() {}
}

describe('OpenAPI from the routes and their zod schemas', () => {
  const document = buildOpenApiDocument({ title: 'Things', version: '1' }, [DescribedController]);
  const paths = document['paths'] as Record<string, Record<string, Record<string, unknown>>>;

  it('describes each route with its path parameters, query, body and responses', () => {
    expect(Object.keys(paths).sort()).toEqual(['/api/v1/things', '/api/v1/things/{id}']);
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
        { name: 'id', in: 'path', required: true },
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
      securitySchemes: { 'api-key': expect.any(Object), operator: expect.any(Object) },
    });
  });

  it('names every route that has no spec, and every body route without its schema', () => {
    expect(routesWithoutSpec([DescribedController])).toEqual([]);
    expect(routesWithoutSpec([UndescribedController]).sort()).toEqual([
      'GET /api/v1/other (UndescribedController.list)',
      'PUT /api/v1/other/{id} (UndescribedController.replace)',
    ]);
  });

  it('renders a reference page with every operation, escaped', () => {
    const page = renderReferencePage(
      buildOpenApiDocument({ title: 'A <b>title</b>', version: '1' }, [DescribedController]),
    );
    expect(page).toContain('A &#60;b&#62;title&#60;/b&#62;');
    expect(page.match(/<section class="op"/g)).toHaveLength(3);
    expect(page).toContain('<code>/api/v1/things/{id}</code>');
  });
});

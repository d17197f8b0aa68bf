import 'reflect-metadata';
import {
  buildOpenApiDocument,
  operationsWithUndeclaredErrors,
  refsOutsideComponents,
  routesWithoutResponseSchema,
  routesWithoutSpec,
} from '@meridian/platform-http/openapi';
import { openApiLintErrors } from '@meridian/testing';
import { DomainError } from '@meridian/errors';
import { httpAnswerOf } from '@meridian/platform-http';
import { REST_CONTROLLERS } from './app.module';
import { parseAuditRequest, refuseQuery } from './common/audit-request';
import { ROUTE_ERRORS } from './common/route-errors';

type Paths = Record<string, Record<string, Record<string, unknown>>>;
type Responses = Record<string, { description: string; content?: unknown }>;

const documentOf = () => buildOpenApiDocument({ title: 'audit', version: 'v1' }, REST_CONTROLLERS);
const pathsOf = () => documentOf()['paths'] as Paths;
const responsesOf = (path: string, method: string) =>
  pathsOf()[path]![method]!['responses'] as Responses;

/** A schema with its `$ref`s to the document's components resolved (any depth). */
function resolved(node: unknown, document = documentOf()): unknown {
  if (Array.isArray(node)) return node.map((item) => resolved(item, document));
  if (!node || typeof node !== 'object') return node;
  const ref = (node as { $ref?: unknown }).$ref;
  if (typeof ref === 'string' && ref.startsWith('#/')) {
    const target = ref
      .slice(2)
      .split('/')
      .reduce<unknown>((at, key) => (at as Record<string, unknown>)[key], document);
    return resolved(target, document);
  }
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) => [key, resolved(value, document)]),
  );
}

const jsonSchemaOf = (response: { content?: unknown } | undefined) =>
  resolved(
    (response?.content as { 'application/json': { schema: unknown } })['application/json'].schema,
  ) as Record<string, unknown>;

const CHECKS = [
  ['/v1/wallet-audit/check', 'address'],
  ['/v1/wallet-audit/audit', 'address'],
  ['/v1/rug-pull/check', 'contract_address'],
] as const;

/** The body the audit error filter sends for what `run` throws (request_id as the filter adds). */
function answerTo(run: () => unknown): { status: number; body: Record<string, unknown> } {
  try {
    run();
  } catch (error) {
    const { status, body } = httpAnswerOf(error);
    return { status, body: { ...body, request_id: 'req-1' } };
  }
  throw new Error('did not throw');
}

describe('audit-api OpenAPI', () => {
  it('has a spec (and a body schema where a body is taken) for every route', () => {
    expect(routesWithoutSpec(REST_CONTROLLERS)).toEqual([]);
  });

  it('has a success response schema for every route (clients generate SDKs from it)', async () => {
    expect(routesWithoutResponseSchema(REST_CONTROLLERS)).toEqual([]);
    const document = buildOpenApiDocument({ title: 'audit', version: 'v1' }, REST_CONTROLLERS);
    // Every reference resolves against the document's root, as client generators read it.
    expect(refsOutsideComponents(document)).toEqual([]);
    expect(await openApiLintErrors(document)).toEqual([]);
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

  it('declares the 400 and 401 of every operation that validates and authenticates', () => {
    expect(operationsWithUndeclaredErrors(documentOf())).toEqual([]);
  });

  it('declares every error status of each operation, its codes in the description (QA 1)', () => {
    const codes: Record<string, string[]> = {
      401: ['missing_api_key', 'invalid_api_key'],
      402: ['quota_exhausted'],
      403: ['plan_required', 'audit_scope_required'],
      429: ['rate_limited', 'Retry-After'],
      500: ['analysis_failed'],
      502: ['upstream_unavailable'],
      503: ['credentials_unavailable'],
    };
    for (const [path, field] of CHECKS) {
      const responses = responsesOf(path, 'post');
      expect([path, Object.keys(responses).sort()]).toEqual([
        path,
        ['200', '400', '401', '402', '403', '413', '415', '429', '500', '502', '503', 'default'],
      ]);
      const fourHundred = [
        'malformed_body',
        'invalid_query',
        'missing_network',
        'invalid_network',
        'unknown_network',
        `missing_${field}`,
        `invalid_${field}`,
        `invalid_${field}_checksum`,
        ...(field === 'contract_address'
          ? ['unsupported_network', 'not_a_contract', 'not_a_token']
          : []),
      ];
      for (const [status, named] of Object.entries({ ...codes, 400: fourHundred }))
        for (const code of named)
          expect([path, status, responses[status]!.description]).toEqual([
            path,
            status,
            expect.stringContaining(code),
          ]);
      // Every answer saying Retry-After declares the header (the 502 is audit-api's own).
      for (const status of ['429', '502', '503'])
        expect([path, status, responses[status]]).toEqual([
          path,
          status,
          expect.objectContaining({
            headers: expect.objectContaining({ 'Retry-After': expect.anything() }),
          }),
        ]);
      for (const status of Object.keys(codes))
        expect(jsonSchemaOf(responses[status])).toMatchObject({
          required: expect.arrayContaining(['error', 'request_id']),
        });
    }
    expect(responsesOf('/v1/wallet-audit/check', 'post')['400']!.description).not.toContain(
      'not_a_contract',
    );
    const quota = responsesOf('/v1/quota', 'get');
    expect(Object.keys(quota).sort()).toEqual(['200', '400', '401', '403', '503', 'default']);
    expect(quota['400']!.description).toContain('invalid_query');
    expect(quota['403']!.description).toContain('plan_required');
  });

  it('declares the members beyond {error, message, request_id} of the statuses that carry them (QA 1)', () => {
    for (const [path, field] of CHECKS) {
      const responses = responsesOf(path, 'post');
      expect(jsonSchemaOf(responses['402'])).toMatchObject({
        required: expect.arrayContaining(['error', 'request_id', 'limit', 'resets_at']),
        properties: {
          limit: { type: 'integer' },
          resets_at: { type: 'string', format: 'date-time' },
        },
      });
      expect(jsonSchemaOf(responses['400'])).toMatchObject({
        required: expect.arrayContaining(['error', 'request_id']),
        properties: {
          field: { enum: ['network', field] },
          expected: { type: 'string' },
          location: { enum: ['body', 'query'] },
          path: { type: 'string' },
        },
      });
    }
  });

  it.each(CHECKS)(
    'the declared 400 of %s describes the bodies the request checks answer',
    (path, field) => {
      const spec = path.startsWith('/v1/rug-pull') ? ROUTE_ERRORS.rugPull : ROUTE_ERRORS.wallet;
      const schema = spec[400].schema;
      const request =
        (body: unknown, query: unknown = {}) =>
        () =>
          parseAuditRequest({ body, query }, field);
      const typo = '0x70997970C51812dc3A010C7d01b50e0d17dC79C8';
      const answers = [
        answerTo(request([])),
        answerTo(request({ address: typo })),
        answerTo(request({ network: 'DOGE', [field]: typo })),
        answerTo(request({ network: 'ETH', [field]: '0x12' })),
        answerTo(request({ network: 'ETH', [field]: typo })),
        answerTo(request({ network: 'ETH', [field]: typo.toLowerCase(), chain_id: 1 })),
        answerTo(request({ network: 'ETH', [field]: typo.toLowerCase() }, { debug: '1' })),
      ];
      expect(answers.map((a) => a.status)).toEqual(Array(answers.length).fill(400));
      expect(answers[4]!.body).toMatchObject({ field, expected: expect.any(String) });
      expect(answers[5]!.body).toMatchObject({ location: 'body', path: 'body' });
      expect(answers[6]!.body).toMatchObject({ location: 'query', path: 'query' });
      // Strict: the declared schema (additionalProperties false) has every member sent.
      for (const { body } of answers) expect(schema.strict().parse(body)).toEqual(body);
    },
  );

  it("the declared 400 of the quota and 402 of the checks describe the service's bodies", () => {
    const query = answerTo(() => refuseQuery({ debug: '1' }));
    expect(ROUTE_ERRORS.quota[400].schema.strict().parse(query.body)).toEqual(query.body);
    // As QuotaService.reserve throws it.
    const exhausted = answerTo(() => {
      throw new DomainError('quota_exhausted', 'payment_required', 'used up', {
        details: { limit: 5, resets_at: '2026-03-03T00:00:00.000Z' },
      });
    });
    expect(exhausted.status).toBe(402);
    expect(ROUTE_ERRORS.wallet[402].schema!.parse(exhausted.body)).toEqual(exhausted.body);
  });

  it('declares every timestamp as format date-time with its pattern (QA 2)', () => {
    const times = new Map<string, Record<string, unknown>>();
    const walk = (node: unknown, name: string) => {
      if (Array.isArray(node)) return node.forEach((n) => walk(n, name));
      if (!node || typeof node !== 'object') return;
      const schema = node as Record<string, unknown>;
      if (schema['type'] === 'string' && name) times.set(`${name}#${times.size}`, schema);
      for (const key of ['anyOf', 'oneOf', 'items'] as const) walk(schema[key], name);
      for (const [member, child] of Object.entries(
        (schema['properties'] ?? {}) as Record<string, unknown>,
      ))
        walk(child, /(At|Time|Checked|_at)$/.test(member) ? member : '');
    };
    const paths = pathsOf();
    for (const operations of Object.values(paths))
      for (const operation of Object.values(operations))
        for (const response of Object.values(operation['responses'] as Responses))
          if (response.content) walk(jsonSchemaOf(response), '');
    const names = new Set([...times.keys()].map((key) => key.split('#')[0]));
    expect([...names].sort()).toEqual([
      'contractCreationTime',
      'createdAt',
      'lastChecked',
      'resets_at',
      'updatedAt',
    ]);
    for (const [name, schema] of times)
      expect([name, schema]).toEqual([
        name,
        expect.objectContaining({ format: 'date-time', pattern: expect.any(String) }),
      ]);
    const pattern = new RegExp(
      (
        jsonSchemaOf(responsesOf('/v1/quota', 'get')['200']) as {
          properties: { resets_at: { pattern: string } };
        }
      ).properties.resets_at.pattern,
    );
    expect(pattern.test(new Date('2026-03-02T08:00:00Z').toISOString())).toBe(true);
    expect(pattern.test('2026-03-02T08:00:00Z')).toBe(false);
  });
});

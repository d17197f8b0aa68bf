import { JetStreamConsumers } from '@meridian/platform-messaging';
import {
  methodNotAllowedCases,
  methodNotAllowedMismatches,
  undeclaredErrorAnswers,
  type OpenApiPaths,
} from '@meridian/testing';
import { newId } from '../src/http/ids';
import { startMatcherStack, type MatcherTestStack } from './support/matcher-app';

jest.setTimeout(120_000);

/**
 * A method a route does not take is 405 with `Allow` (RFC 9110 §15.5.6), in the COMPAT error
 * body; an unknown path stays 404 (the rule of every REST app: platform-http, ADR 0502).
 */
const OPERATOR_TOKEN = 'operator-token-of-this-test-0001';

describe('webhooks API: 405 for a method a route does not take, 404 for an unknown path', () => {
  let s: MatcherTestStack;
  beforeAll(async () => {
    // An operator token, so the operator route's probes reach its id check.
    s = await startMatcherStack({ OPERATOR_TOKEN });
    // Its KV watches open before the tests (/readyz leaves NATS out, ADR 0212): closing the app
    // while its KV watches are still opening can leave a watch running (app.close() then never
    // returns).
    const deadline = Date.now() + 60_000;
    while (!s.app.get(JetStreamConsumers).attached()) {
      if (Date.now() > deadline) throw new Error('webhook-matcher: KV watches not open in 60 s');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });
  afterAll(() => s?.close());

  const ask = async (method: string, url: string) => {
    const response = await s.app.inject({
      method: method as 'GET',
      url,
      headers: { authorization: 'Bearer any' },
    });
    return {
      status: response.statusCode,
      allow: response.headers['allow'],
      body: response.json() as Record<string, unknown>,
      requestId: response.headers['x-request-id'],
    };
  };

  it.each([
    ['GET', '/api/v1/webhooks/wh_1/pause', 'POST'],
    ['PUT', '/api/v1/webhooks/wh_1', 'GET, HEAD, PATCH, DELETE'],
    ['DELETE', '/api/v1/webhooks', 'GET, HEAD, POST'],
    ['GET', '/api/v1/address-lists/al_1/entries/remove', 'POST'],
  ])('%s %s: 405, Allow: %s, in the COMPAT body', async (method, url, allow) => {
    const answer = await ask(method, url);
    expect([answer.status, answer.allow]).toEqual([405, allow]);
    expect(answer.body).toEqual({
      error: 'method_not_allowed',
      message: `${method} is not a method of this route; it allows ${allow}`,
      request_id: answer.requestId,
    });
  });

  it('every documented route: each method no route of its path takes is 405 naming the ones they do', async () => {
    const doc = (
      await s.app.inject({ method: 'GET', url: '/openapi.json' })
    ).json() as OpenApiPaths;
    expect(methodNotAllowedCases(doc).length).toBeGreaterThan(5);
    const mismatches = await methodNotAllowedMismatches(doc, async (method, path) => {
      const answer = await ask(method, path);
      return { status: answer.status, allow: answer.allow, error: answer.body['error'] };
    });
    expect(mismatches).toEqual([]);
  });

  // The error statuses /openapi.json declares are the ones the routes answer (QA: list and read
  // routes declared theirs only under default): every operation without credentials, and with
  // an id its schema refuses, an undeclared query parameter or an undeclared body field.
  it('every documented route: its refusals are declared in /openapi.json with their codes', async () => {
    const doc = (
      await s.app.inject({ method: 'GET', url: '/openapi.json' })
    ).json() as OpenApiPaths;
    const { key } = await s.billing.createAccount({ plan: 'starter' });
    const credentials: Record<string, string> = { 'api-key': key, operator: OPERATOR_TOKEN };
    const answered: string[] = [];
    const undeclared = await undeclaredErrorAnswers(doc, async (probe) => {
      const response = await s.app.inject({
        method: probe.method as 'GET',
        url: probe.url,
        headers: {
          ...(probe.scheme ? { authorization: `Bearer ${credentials[probe.scheme]}` } : {}),
          ...(probe.contentType ? { 'content-type': probe.contentType } : {}),
        },
        payload: probe.payload,
      });
      const error = (response.json() as Record<string, unknown>)['error'];
      answered.push(`${response.statusCode} ${String(error)}`);
      return { status: response.statusCode, error };
    });
    expect(undeclared).toEqual([]);
    // Each kind of refusal was met: the probes reached the guards, the id checks and the parsers.
    expect(new Set(answered)).toEqual(
      new Set([
        '401 unauthorized',
        '400 invalid_id',
        '400 invalid_query',
        '400 malformed_body',
        '404 not_found',
        '413 request_too_large',
        '415 unsupported_media_type',
      ]),
    );
  });

  // One rule for query strings (UndeclaredQueryInterceptor): QA found `?x=1` refused by the list
  // routes and ignored by the others (limits, a webhook, its stats, resume…). Every operation,
  // with ids of the right form so each reaches its own checks, refuses an undeclared parameter
  // in the same words, and its declared 400 names the code.
  it('every documented route: an undeclared query parameter is 400 invalid_query, declared', async () => {
    const doc = (
      await s.app.inject({ method: 'GET', url: '/openapi.json' })
    ).json() as OpenApiPaths;
    const { key } = await s.billing.createAccount({ plan: 'starter' });
    const credentials: Record<string, string> = { 'api-key': key, operator: OPERATOR_TOKEN };
    const ids: Record<string, string> = {
      webhooks: newId('wh'),
      'address-lists': newId('al'),
      accounts: `acc_${'0'.repeat(24)}`,
      deliveries: `ev_${'0'.repeat(32)}`,
    };
    const answers: string[] = [];
    for (const [template, operations] of Object.entries(doc.paths))
      for (const [method, raw] of Object.entries(operations)) {
        const operation = raw as {
          security?: Record<string, unknown>[];
          requestBody?: unknown;
          responses?: Record<string, { description?: string }>;
        };
        // Each {param} takes the id form of the segment before it (/webhooks/{id} → wh_…).
        const path = template.replace(/([^/]+)\/\{[^}]+\}/g, (_all, segment: string) =>
          ids[segment] ? `${segment}/${ids[segment]}` : `${segment}/x1`,
        );
        const scheme = Object.keys(operation.security?.[0] ?? {})[0];
        const response = await s.app.inject({
          method: method.toUpperCase() as 'GET',
          url: `${path}?undeclared_parameter=1`,
          headers: {
            ...(scheme ? { authorization: `Bearer ${credentials[scheme]}` } : {}),
            ...(operation.requestBody ? { 'content-type': 'application/json' } : {}),
          },
          ...(operation.requestBody ? { payload: '{}' } : {}),
        });
        const body = response.json() as { error?: string; message?: string };
        const declared = /(^|[^a-z_])invalid_query([^a-z_]|$)/.test(
          operation.responses?.['400']?.description ?? '',
        );
        answers.push(
          `${method.toUpperCase()} ${template}: ${response.statusCode} ${body.error} ` +
            `${body.message} ${declared ? 'declared' : 'NOT DECLARED'}`,
        );
      }
    expect(answers.length).toBeGreaterThanOrEqual(24);
    expect(
      answers.filter(
        (a) =>
          !/ 400 invalid_query query: unknown parameter "undeclared_parameter" declared$/.test(a),
      ),
    ).toEqual([]);
  });

  it.each([
    ['GET', '/api/v1/nothing'],
    ['POST', '/api/v1/webhooks/wh_1/pause/now'],
    ['DELETE', '/api/v2/webhooks'],
  ])('%s %s (no such path): still 404 not_found, no Allow', async (method, url) => {
    const answer = await ask(method, url);
    expect([answer.status, answer.allow, answer.body['error']]).toEqual([
      404,
      undefined,
      'not_found',
    ]);
  });
});

import { JetStreamConsumers, provisionMessaging } from '@meridian/platform-messaging';
import {
  deleteNatsNamespace,
  FakeClock,
  methodNotAllowedCases,
  methodNotAllowedMismatches,
  testNatsUrl,
  undeclaredErrorAnswers,
  uniqueNatsPrefix,
  type OpenApiPaths,
} from '@meridian/testing';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { startAuditApp, type AuditTestApp } from './support/audit-app';
import { InTestCredentialSource } from './support/in-test-credentials';

/**
 * A method a route does not take is 405 with `Allow` (RFC 9110 §15.5.6), in the COMPAT error
 * body; an unknown path stays 404 (the rule of every REST app: platform-http, ADR 0502).
 */
describe('audit API: 405 for a method a route does not take, 404 for an unknown path', () => {
  let audit: AuditTestApp;
  const KEY = 'declared-errors-key';
  const natsUrl = testNatsUrl();
  const natsPrefix = uniqueNatsPrefix();

  beforeAll(async () => {
    const nc = await connect({ servers: natsUrl });
    await provisionMessaging(await jetstreamManager(nc), natsPrefix);
    await nc.close();
    audit = await startAuditApp(
      { NATS_URL: natsUrl, NATS_PREFIX: natsPrefix },
      {
        credentials: new InTestCredentialSource().add(KEY, { planId: 'starter' }),
        clock: new FakeClock(new Date()),
      },
    );
    // Its KV watch open before the tests (/readyz leaves NATS out, ADR 0212): closing the app
    // while its KV watch is still opening can leave the watch running (app.close() then never
    // returns).
    const deadline = Date.now() + 30_000;
    while (!audit.app.get(JetStreamConsumers).attached()) {
      if (Date.now() > deadline) throw new Error('audit-api: KV watches not open in 30 s');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }, 90_000);

  afterAll(async () => {
    await audit?.close();
    await deleteNatsNamespace(natsUrl, natsPrefix);
  });

  const ask = async (method: string, url: string) => {
    const response = await audit.app.inject({
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

  it('GET on POST /v1/wallet-audit/check: 405, Allow: POST, in the COMPAT body', async () => {
    const answer = await ask('GET', '/v1/wallet-audit/check');
    expect([answer.status, answer.allow]).toEqual([405, 'POST']);
    expect(answer.body).toEqual({
      error: 'method_not_allowed',
      message: 'GET is not a method of this route; it allows POST',
      request_id: answer.requestId,
    });
  });

  it('DELETE on GET /v1/quota: 405, Allow: GET, HEAD', async () => {
    const answer = await ask('DELETE', '/v1/quota');
    expect([answer.status, answer.allow, answer.body['error']]).toEqual([
      405,
      'GET, HEAD',
      'method_not_allowed',
    ]);
  });

  it('every documented route: each method no route of its path takes is 405 naming the ones they do', async () => {
    const doc = (
      await audit.app.inject({ method: 'GET', url: '/openapi.json' })
    ).json() as OpenApiPaths;
    expect(methodNotAllowedCases(doc).length).toBeGreaterThan(5);
    const mismatches = await methodNotAllowedMismatches(doc, async (method, path) => {
      const answer = await ask(method, path);
      return { status: answer.status, allow: answer.allow, error: answer.body['error'] };
    });
    expect(mismatches).toEqual([]);
  });

  // The error statuses /openapi.json declares are the ones the routes answer: every operation
  // without credentials, and with an undeclared query parameter or an undeclared body field.
  it('every documented route: its refusals are declared in /openapi.json with their codes', async () => {
    const doc = (
      await audit.app.inject({ method: 'GET', url: '/openapi.json' })
    ).json() as OpenApiPaths;
    const answered = new Set<string>();
    const undeclared = await undeclaredErrorAnswers(doc, async (probe) => {
      const response = await audit.app.inject({
        method: probe.method as 'GET',
        url: probe.url,
        headers: {
          ...(probe.scheme ? { authorization: `Bearer ${KEY}` } : {}),
          ...(probe.contentType ? { 'content-type': probe.contentType } : {}),
        },
        payload: probe.payload,
      });
      const error = (response.json() as Record<string, unknown>)['error'];
      answered.add(`${response.statusCode} ${String(error)}`);
      return { status: response.statusCode, error };
    });
    expect(undeclared).toEqual([]);
    // The body is checked before the query, its first problem first (README "Errors").
    expect(answered).toEqual(
      new Set([
        '401 missing_api_key',
        '400 missing_network',
        '413 request_too_large',
        '415 unsupported_media_type',
      ]),
    );
  });

  it.each([
    ['GET', '/v1/wallet-audit/nope'],
    ['POST', '/v1/wallet-audit/check/extra'],
    ['DELETE', '/v2/quota'],
  ])('%s %s (no such path): still 404 not_found, no Allow', async (method, url) => {
    const answer = await ask(method, url);
    expect([answer.status, answer.allow, answer.body['error']]).toEqual([
      404,
      undefined,
      'not_found',
    ]);
  });
});

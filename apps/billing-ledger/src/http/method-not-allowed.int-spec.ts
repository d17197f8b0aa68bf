import {
  methodNotAllowedCases,
  methodNotAllowedMismatches,
  undeclaredErrorAnswers,
  type OpenApiPaths,
} from '@meridian/testing';
import {
  BillingHarness,
  OPERATOR_TOKEN,
  api,
  bulkAccounts,
  type BillingApp,
} from '../testing/billing-harness';

/**
 * A method a route does not take is 405 with `Allow` (RFC 9110 §15.5.6), in the COMPAT error
 * body; an unknown path stays 404 (the rule of every REST app: platform-http, ADR 0502).
 */
describe('billing-ledger account API: 405 for a method a route does not take, 404 for an unknown path', () => {
  const h = new BillingHarness();
  let billing: BillingApp;

  beforeAll(async () => {
    await h.setup();
    billing = await h.start();
  });
  afterAll(() => h.teardown());

  const ask = async (method: string, path: string) => {
    const response = await fetch(`${billing.url}${path}`, {
      method,
      headers: { authorization: 'Bearer any' },
    });
    return {
      status: response.status,
      allow: response.headers.get('allow'),
      body: (await response.json()) as Record<string, unknown>,
      requestId: response.headers.get('x-request-id'),
    };
  };

  it.each([
    ['GET', '/api/v1/access-tokens/tok_000000000000000000000001/roll', 'POST'],
    ['DELETE', '/api/v1/account', 'GET, HEAD'],
    ['POST', '/api/v1/account/plan', 'PUT'],
    ['PATCH', '/api/v1/api-keys', 'GET, HEAD, POST'],
  ])('%s %s: 405, Allow: %s, in the COMPAT body', async (method, path, allow) => {
    const answer = await ask(method, path);
    expect([answer.status, answer.allow]).toEqual([405, allow]);
    expect(answer.body).toEqual({
      error: 'method_not_allowed',
      message: `${method} is not a method of this route; it allows ${allow}`,
      request_id: answer.requestId,
    });
  });

  it('every documented route: each method no route of its path takes is 405 naming the ones they do', async () => {
    const doc = (await (await fetch(`${billing.url}/openapi.json`)).json()) as OpenApiPaths;
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
    const doc = (await (await fetch(`${billing.url}/openapi.json`)).json()) as OpenApiPaths;
    const [account] = await bulkAccounts(billing.url, 1, 'declared-errors');
    const credentials: Record<string, string> = {
      'api-key': account!.key,
      operator: OPERATOR_TOKEN,
    };
    const answered = new Set<string>();
    const undeclared = await undeclaredErrorAnswers(doc, async (probe) => {
      const answer = await api<Record<string, unknown>>(
        billing.url,
        probe.method,
        probe.url,
        probe.scheme ? credentials[probe.scheme] : undefined,
        probe.payload,
        probe.contentType ? { 'content-type': probe.contentType } : {},
      );
      answered.add(`${answer.status} ${String(answer.body?.['error'])}`);
      return { status: answer.status, error: answer.body?.['error'] };
    });
    expect(undeclared).toEqual([]);
    // Each kind of refusal was met: the probes reached the guards, the id checks and the parsers.
    expect(answered).toEqual(
      new Set([
        '401 unauthorized',
        '404 not_found',
        '400 invalid_query',
        '400 malformed_body',
        '413 request_too_large',
        '415 unsupported_media_type',
      ]),
    );
  });

  it.each([
    ['GET', '/api/v1/nothing'],
    ['POST', '/api/v1/account/plan/now'],
    ['DELETE', '/api/v2/account'],
  ])('%s %s (no such path): still 404 not_found, no Allow', async (method, path) => {
    const answer = await ask(method, path);
    expect([answer.status, answer.allow, answer.body['error']]).toEqual([404, null, 'not_found']);
  });
});

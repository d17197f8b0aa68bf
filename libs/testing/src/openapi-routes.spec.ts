import { methodNotAllowedCases, methodNotAllowedMismatches } from './openapi-routes';

describe('methodNotAllowedCases', () => {
  it('each documented path under each method no matching route takes, with what they take', () => {
    const cases = methodNotAllowedCases({
      paths: {
        '/webhooks': { get: {}, post: {} },
        '/webhooks/{id}': { get: {}, delete: {} },
        '/webhooks/limits': { get: {} },
        '/webhooks/{id}/pause': { post: {} },
      },
    });
    expect(cases).toEqual([
      { method: 'PUT', path: '/webhooks', allow: ['GET', 'HEAD', 'POST'] },
      { method: 'PATCH', path: '/webhooks', allow: ['GET', 'HEAD', 'POST'] },
      { method: 'DELETE', path: '/webhooks', allow: ['GET', 'HEAD', 'POST'] },
      { method: 'POST', path: '/webhooks/x1', allow: ['DELETE', 'GET', 'HEAD'] },
      { method: 'PUT', path: '/webhooks/x1', allow: ['DELETE', 'GET', 'HEAD'] },
      { method: 'PATCH', path: '/webhooks/x1', allow: ['DELETE', 'GET', 'HEAD'] },
      // `/webhooks/{id}` routes `/webhooks/limits` too: DELETE is allowed there.
      { method: 'POST', path: '/webhooks/limits', allow: ['DELETE', 'GET', 'HEAD'] },
      { method: 'PUT', path: '/webhooks/limits', allow: ['DELETE', 'GET', 'HEAD'] },
      { method: 'PATCH', path: '/webhooks/limits', allow: ['DELETE', 'GET', 'HEAD'] },
      { method: 'GET', path: '/webhooks/x1/pause', allow: ['POST'] },
      { method: 'PUT', path: '/webhooks/x1/pause', allow: ['POST'] },
      { method: 'PATCH', path: '/webhooks/x1/pause', allow: ['POST'] },
      { method: 'DELETE', path: '/webhooks/x1/pause', allow: ['POST'] },
    ]);
  });

  it('names each request not answered 405 method_not_allowed with the expected Allow', async () => {
    const doc = { paths: { '/a': { get: {} }, '/b': { post: {} } } };
    const mismatches = await methodNotAllowedMismatches(doc, async (method, path) =>
      path === '/a' || method === 'PUT'
        ? { status: 405, allow: path === '/a' ? 'HEAD, GET' : 'POST', error: 'method_not_allowed' }
        : { status: 404, allow: undefined, error: 'not_found' },
    );
    expect(mismatches).toEqual(
      ['GET', 'PATCH', 'DELETE'].map((method) => ({
        method,
        path: '/b',
        expected: '405 method_not_allowed POST',
        got: '404 not_found undefined',
      })),
    );
  });
});

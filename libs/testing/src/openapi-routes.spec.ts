import { methodNotAllowedCases } from './openapi-routes';

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
});

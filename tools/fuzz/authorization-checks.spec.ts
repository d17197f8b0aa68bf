import { credentialHeaders, matrixCoverage } from './authorization-checks';
import { AUTHORIZATION_MATRIX } from './authorization-matrix';

const routesOf = (process: string) =>
  Object.keys(AUTHORIZATION_MATRIX[process]!).map((key) => {
    const [method, url] = key.split(' ') as [string, string];
    return { method, url };
  });

describe('authorization matrix coverage (dashboard)', () => {
  it('fails for a dashboard route added without a row, and for a row whose route is gone', () => {
    const routes = routesOf('dashboard').filter((route) => route.url !== '/api/networks');
    expect(
      matrixCoverage('dashboard', [...routes, { method: 'POST', url: '/api/new-thing' }]),
    ).toEqual([
      'dashboard: route POST /api/new-thing has no row in tools/fuzz/authorization-matrix.ts',
      'dashboard: row GET /api/networks names no route of the running process',
    ]);
  });

  it("counts the page's built files (content-hashed names) as the one row that stands for them", () => {
    const routes = routesOf('dashboard').filter((route) => route.url !== '/assets/:file');
    const built = [
      { method: 'GET', url: '/assets/index-LFRU46fv.js' },
      { method: 'GET', url: '/assets/index-ByfUWPg9.css' },
    ];
    expect(matrixCoverage('dashboard', [...routes, ...built])).toEqual([]);
    // Only under /assets: another file at the root is a route like any other.
    expect(
      matrixCoverage('dashboard', [...routes, ...built, { method: 'GET', url: '/x.js' }]),
    ).toEqual(['dashboard: route GET /x.js has no row in tools/fuzz/authorization-matrix.ts']);
  });

  it('sends a session as its cookie, with the CSRF token only when asked', () => {
    const session = { cookie: 'c', csrf: 't' };
    expect(credentialHeaders({ session, withCsrf: true })).toEqual({
      cookie: 'mrd_session=c',
      'x-csrf-token': 't',
    });
    expect(credentialHeaders({ session, withCsrf: false })).toEqual({ cookie: 'mrd_session=c' });
    expect(credentialHeaders('Bearer k')).toEqual({ authorization: 'Bearer k' });
  });
});

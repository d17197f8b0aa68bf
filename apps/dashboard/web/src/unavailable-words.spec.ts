import { pageMessageOf } from './unavailable-words';

describe('pageMessageOf', () => {
  it('says a brief outage (503 database_unavailable and the like) in words, not the API code', () => {
    for (const code of ['database_unavailable', 'credentials_unavailable', 'billing_unavailable'])
      expect(
        pageMessageOf(503, code, 'the database cannot be reached right now; retry later'),
      ).toBe('The service is briefly unavailable; try again in a few seconds.');
  });

  it("keeps every other answer's own words", () => {
    const hung = 'billing did not answer within 15 s';
    expect(pageMessageOf(503, 'upstream_unavailable', hung)).toBe(hung);
    expect(pageMessageOf(503, 'secret_unavailable', 'x')).toBe('x');
    expect(pageMessageOf(500, 'database_unavailable', 'y')).toBe('y');
    expect(pageMessageOf(404, 'not_found', 'no such webhook')).toBe('no such webhook');
  });
});

import { pageTitle } from './page-title';

describe('pageTitle', () => {
  it("names the page before the app, so tabs tell pages apart (QA: all 'Meridian dashboard')", () => {
    expect(pageTitle('Node access')).toBe('Node access · Meridian dashboard');
    expect(pageTitle(undefined)).toBe('Meridian dashboard');
  });
});

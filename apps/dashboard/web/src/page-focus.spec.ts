import { pageChange } from './page-focus';

describe('pageChange', () => {
  it('moves focus after an in-app navigation (QA: focus stayed on the menu link)', () => {
    const first = pageChange(null, '/', 'POP');
    expect(first.moveFocus).toBe(false);
    const next = pageChange(first.shown, '/webhooks', 'PUSH');
    expect(next).toEqual({ shown: { pathname: '/webhooks', navigated: true }, moveFocus: true });
    // Back and forward change the page too.
    expect(pageChange(next.shown, '/', 'POP').moveFocus).toBe(true);
  });

  it('leaves focus alone on the first load and its redirect', () => {
    const first = pageChange(null, '/', 'POP');
    const redirected = pageChange(first.shown, '/operator/accounts', 'REPLACE');
    expect(redirected).toEqual({
      shown: { pathname: '/operator/accounts', navigated: false },
      moveFocus: false,
    });
    expect(pageChange(redirected.shown, '/settings', 'PUSH').moveFocus).toBe(true);
  });

  it('moves focus on a replace after the first load (a form that navigates on)', () => {
    const shown = { pathname: '/webhooks/new', navigated: true };
    expect(pageChange(shown, '/webhooks/abc', 'REPLACE').moveFocus).toBe(true);
  });

  it('keeps focus when only the state of the same path changes', () => {
    const shown = { pathname: '/webhooks/abc', navigated: true };
    expect(pageChange(shown, '/webhooks/abc', 'REPLACE')).toEqual({ shown, moveFocus: false });
  });
});

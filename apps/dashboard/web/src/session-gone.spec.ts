import { isSessionGone } from './session-gone';

describe('isSessionGone', () => {
  it.each([
    [401, 'unauthenticated', true],
    // A wrong password at sign-in is the form's error, not a lost session.
    [401, 'invalid_credentials', false],
    // An upstream API refusing a key says nothing about the browser's session.
    [401, 'unauthorized', false],
    [503, 'account_key_rejected', false],
    [403, 'csrf_failed', false],
    [403, 'forbidden', false],
  ])('%i %s → %s', (status, code, gone) => {
    expect(isSessionGone(status, code)).toBe(gone);
  });
});

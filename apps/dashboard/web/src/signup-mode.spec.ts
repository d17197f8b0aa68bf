import { shownSignupMode, signupModeSaved } from './signup-mode';

describe('sign-up mode radios (QA L6)', () => {
  it('show the mode being saved at once, and the server mode otherwise', () => {
    expect(shownSignupMode('open', { pending: true, mode: 'invite' })).toBe('invite');
    expect(shownSignupMode('open', { pending: false, mode: 'invite' })).toBe('open');
    expect(shownSignupMode('invite', { pending: false, mode: undefined })).toBe('invite');
  });

  it('say a save that succeeded', () => {
    expect(signupModeSaved('invite')).toBe('Saved. Sign-up is now by invitation only.');
    expect(signupModeSaved('open')).toBe('Saved. Sign-up is now open to anyone.');
  });
});

/**
 * The operator's sign-up mode radios (QA L6): the radio shows the mode chosen at once, while the
 * save is in flight, and the server's mode again once it answered (a refused save puts the old
 * one back, with the error said); a save that succeeded says so, as the other settings forms do.
 */
export type SignupMode = 'open' | 'invite';

export const SIGNUP_MODE_LABELS: Record<SignupMode, string> = {
  open: 'Open: anyone can create an account',
  invite: 'Invitation only',
};

/** The mode the radios show: the one being saved, else the server's. */
export function shownSignupMode(
  server: SignupMode,
  saving: { pending: boolean; mode: SignupMode | undefined },
): SignupMode {
  return saving.pending && saving.mode !== undefined ? saving.mode : server;
}

/** The notice of a save that succeeded. */
export const signupModeSaved = (mode: SignupMode): string =>
  `Saved. Sign-up is now ${mode === 'open' ? 'open to anyone' : 'by invitation only'}.`;

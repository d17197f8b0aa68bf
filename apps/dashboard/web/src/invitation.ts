/**
 * What the sign-up page shows before anyone types (ADR 0601, README "Sign-up by invitation"):
 * open sign-up, the invitation-only hint, an invitation link's invited email (pre-filled and
 * locked), or why a link can no longer be used. Refusals the server would give after a submit
 * are said on load instead.
 */

/** `GET /api/auth/invitations/{code}`: a known code's state (404 `invitation_unknown` else). */
export interface InvitationLookup {
  status: 'valid' | 'used' | 'expired' | 'void';
  /** Why a `void` one cannot be used: its email has a user, a newer link replaced it, revoked. */
  reason?: string;
  email?: string;
  expires_at: string;
  /**
   * A team invitation (ADR 0604), in every state: the sign-up joins an existing account with this
   * role, and a new link is asked of the team's owner, not of an operator.
   */
  team?: { role: 'owner' | 'member' };
}

export type SignUpView =
  | { kind: 'open' }
  | { kind: 'closed'; message: string }
  | { kind: 'checking' }
  | { kind: 'invited'; email: string; message: string; team: boolean }
  | { kind: 'refused'; message: string };

export const CLOSED_MESSAGE =
  'Sign-up is by invitation. Ask an operator for an invitation link and open it to create your account.';

/**
 * The words of an invitation's page by its kind: a team's link joins an account its owner runs
 * (ask the team's owner), the operator's makes an account (ask an operator). One table, so no
 * message of one kind names the other's inviter.
 */
export const INVITATION_WORDS = {
  operator: {
    title: 'Create your account',
    submit: 'Create account',
    busy: 'Creating…',
    revokedBy: 'an operator',
    ask: 'Ask an operator',
    made: 'If you made the account, sign in',
  },
  team: {
    title: "Join your team's account",
    submit: 'Join the team',
    busy: 'Joining…',
    revokedBy: 'an owner of the team',
    ask: "Ask the team's owner",
    made: 'If you joined with it, sign in',
  },
} as const;

export type InvitationKind = keyof typeof INVITATION_WORDS;

/** The kind of the link's invitation, as far as the page knows it (operator's until found). */
export function invitationKind(lookup: InvitationLookup | undefined): InvitationKind {
  return lookup?.team ? 'team' : 'operator';
}

export function signUpView(
  mode: 'open' | 'invite',
  code: string | undefined,
  lookup:
    | { state: 'pending' }
    | { state: 'found'; invitation: InvitationLookup }
    | { state: 'failed'; status: number; message: string },
): SignUpView {
  if (code === undefined)
    return mode === 'open' ? { kind: 'open' } : { kind: 'closed', message: CLOSED_MESSAGE };
  if (lookup.state === 'pending') return { kind: 'checking' };
  if (lookup.state === 'failed')
    return {
      kind: 'refused',
      // An unknown code tells no kind: whoever sent it (an operator, a team's owner) makes another.
      message:
        lookup.status === 404
          ? 'This invitation link is unknown: check that it was copied whole, or ask whoever sent it for a new one.'
          : `This invitation link could not be checked (${lookup.message}). Reload to try again.`,
    };
  const { invitation } = lookup;
  const words = INVITATION_WORDS[invitationKind(invitation)];
  if (invitation.status === 'used')
    return {
      kind: 'refused',
      message: `This invitation link has been used. ${words.made}; else ${words.ask.toLowerCase()} for a new link.`,
    };
  if (invitation.status === 'void')
    return {
      kind: 'refused',
      message:
        invitation.reason === 'email_has_user'
          ? 'This invitation link can no longer be used: its email has an account now (a user belongs to one account). Sign in with it.'
          : invitation.reason === 'revoked'
            ? `This invitation link was revoked by ${words.revokedBy}. ${words.ask} for a new one.`
            : 'This invitation link was replaced by a newer one for the same email. Use the latest link, or ask for a new one.',
    };
  if (invitation.status === 'expired')
    return {
      kind: 'refused',
      message: `This invitation link has expired (links last 7 days). ${words.ask} for a new one.`,
    };
  const email = invitation.email ?? '';
  return {
    kind: 'invited',
    email,
    team: invitation.team !== undefined,
    message: invitation.team
      ? `You're invited to join a team's account as ${invitation.team.role === 'owner' ? 'an owner' : 'a member'}: create the user for ${email}.`
      : `You're invited: create the account for ${email}.`,
  };
}

import { CLOSED_MESSAGE, INVITATION_WORDS, invitationKind, signUpView } from './invitation';

const found = (status: 'valid' | 'used' | 'expired', email?: string) =>
  ({
    state: 'found',
    invitation: { status, email, expires_at: '2026-12-01T00:00:00.000Z' },
  }) as const;

describe('signUpView', () => {
  it('open sign-up shows the form; invitation only says so before anyone types', () => {
    expect(signUpView('open', undefined, { state: 'pending' })).toEqual({ kind: 'open' });
    expect(signUpView('invite', undefined, { state: 'pending' })).toEqual({
      kind: 'closed',
      message: CLOSED_MESSAGE,
    });
    expect(CLOSED_MESSAGE).toMatch(/^Sign-up is by invitation/);
  });

  it('an invitation link names the invited email, which the form takes', () => {
    expect(signUpView('invite', 'c', { state: 'pending' })).toEqual({ kind: 'checking' });
    expect(signUpView('invite', 'c', found('valid', 'bob@example.com'))).toEqual({
      kind: 'invited',
      email: 'bob@example.com',
      message: "You're invited: create the account for bob@example.com.",
      team: false,
    });
    // A team invitation (ADR 0604) joins an account rather than making one.
    const team = {
      state: 'found' as const,
      invitation: {
        status: 'valid' as const,
        email: 'bob@example.com',
        expires_at: '2026-03-09T08:00:00.000Z',
        team: { role: 'member' as const },
      },
    };
    expect(signUpView('open', 'c', team)).toMatchObject({
      kind: 'invited',
      message:
        "You're invited to join a team's account as a member: create the user for bob@example.com.",
    });
  });

  it('a used, expired or unknown link says so on load', () => {
    expect(signUpView('invite', 'c', found('used'))).toMatchObject({
      kind: 'refused',
      message: expect.stringMatching(/has been used/),
    });
    expect(signUpView('invite', 'c', found('expired'))).toMatchObject({
      kind: 'refused',
      message: expect.stringMatching(/has expired/),
    });
    expect(
      signUpView('invite', 'c', { state: 'failed', status: 404, message: 'unknown' }),
    ).toMatchObject({ kind: 'refused', message: expect.stringMatching(/is unknown/) });
  });

  it('a link set aside unused says why: its email has an account, or a newer link (QA QQ)', () => {
    const voided = (reason: string) =>
      ({
        state: 'found',
        invitation: { status: 'void', reason, expires_at: '2026-12-01T00:00:00.000Z' },
      }) as const;
    expect(signUpView('invite', 'c', voided('email_has_user'))).toMatchObject({
      kind: 'refused',
      message: expect.stringMatching(/its email has an account now.*Sign in/),
    });
    expect(signUpView('invite', 'c', voided('superseded'))).toMatchObject({
      kind: 'refused',
      message: expect.stringMatching(/replaced by a newer one/),
    });
    // Revoked by the operator (their invitations list): said so, not as a replaced link.
    expect(signUpView('invite', 'c', voided('revoked'))).toMatchObject({
      kind: 'refused',
      message: 'This invitation link was revoked by an operator. Ask an operator for a new one.',
    });
  });

  it("a team's link says its kind in every state: the team's owner to ask, never an operator", () => {
    const teamLink = (status: 'valid' | 'used' | 'expired' | 'void', reason?: string) =>
      ({
        state: 'found',
        invitation: {
          status,
          ...(reason ? { reason } : {}),
          email: 'bob@example.com',
          expires_at: '2026-12-01T00:00:00.000Z',
          team: { role: 'member' },
        },
      }) as const;
    const said = (status: 'valid' | 'used' | 'expired' | 'void', reason?: string) => {
      const view = signUpView('invite', 'c', teamLink(status, reason));
      return view.kind === 'refused' || view.kind === 'invited' ? view.message : '';
    };
    expect(said('void', 'revoked')).toBe(
      "This invitation link was revoked by an owner of the team. Ask the team's owner for a new one.",
    );
    expect(said('expired')).toBe(
      "This invitation link has expired (links last 7 days). Ask the team's owner for a new one.",
    );
    expect(said('used')).toBe(
      "This invitation link has been used. If you joined with it, sign in; else ask the team's owner for a new link.",
    );
    for (const [status, reason] of [
      ['valid'],
      ['used'],
      ['expired'],
      ['void', 'revoked'],
      ['void', 'superseded'],
      ['void', 'email_has_user'],
    ] as const)
      expect(said(status, reason)).not.toMatch(/operator/);
    expect(signUpView('open', 'c', teamLink('valid'))).toMatchObject({ team: true });
    // The page's title and button join rather than create.
    expect(invitationKind(teamLink('valid').invitation)).toBe('team');
    expect(INVITATION_WORDS.team).toMatchObject({
      title: "Join your team's account",
      submit: 'Join the team',
    });
    // The operator's keep theirs; an unknown link (no kind known) names neither.
    expect(signUpView('invite', 'c', found('expired'))).toMatchObject({
      message:
        'This invitation link has expired (links last 7 days). Ask an operator for a new one.',
    });
    expect(invitationKind(undefined)).toBe('operator');
    const unknown = signUpView('invite', 'c', { state: 'failed', status: 404, message: 'x' });
    expect(unknown).toMatchObject({ message: expect.not.stringMatching(/operator/) });
  });
});

import {
  confirmationOf,
  memberActions,
  requestOf,
  soleOwnerNote,
  type TeamMember,
} from './team-actions';

const member = (id: string, role: TeamMember['role'], you = false): TeamMember => ({
  id,
  email: `${id}@example.com`,
  role,
  joined_at: '2026-11-30T08:00:00.000Z',
  you,
});

const labels = (actions: ReturnType<typeof memberActions>) => actions.map((a) => a.label);

describe('memberActions', () => {
  it('an owner changes roles and removes others, and leaves or steps down beside another owner', () => {
    const team = [member('ann', 'owner', true), member('ben', 'owner'), member('cat', 'member')];
    expect(labels(memberActions('owner', team[0]!, team))).toEqual(['Make member', 'Leave']);
    expect(labels(memberActions('owner', team[1]!, team))).toEqual(['Make member', 'Remove']);
    expect(labels(memberActions('owner', team[2]!, team))).toEqual(['Make owner', 'Remove']);
    expect(memberActions('owner', team[2]!, team)[0]!.change).toEqual({
      kind: 'role',
      id: 'cat',
      email: 'cat@example.com',
      you: false,
      role: 'owner',
    });
    expect(memberActions('owner', team[0]!, team)[1]!.change).toEqual({ kind: 'leave' });
  });

  it('the sole owner is offered neither stepping down nor leaving, and is told why', () => {
    const team = [member('ann', 'owner', true), member('cat', 'member')];
    expect(memberActions('owner', team[0]!, team)).toEqual([]);
    expect(labels(memberActions('owner', team[1]!, team))).toEqual(['Make owner', 'Remove']);
    expect(soleOwnerNote(team)).toMatch(/only owner: .*make another member an owner first/);
    expect(soleOwnerNote([member('ann', 'owner', true), member('ben', 'owner')])).toBeUndefined();
    expect(soleOwnerNote([member('ann', 'owner'), member('cat', 'member', true)])).toBeUndefined();
  });

  it('a member only leaves, on their own row', () => {
    const team = [member('ann', 'owner'), member('cat', 'member', true), member('dan', 'member')];
    expect(memberActions('member', team[0]!, team)).toEqual([]);
    expect(memberActions('member', team[2]!, team)).toEqual([]);
    expect(memberActions('member', team[1]!, team)).toEqual([
      { label: 'Leave', danger: true, change: { kind: 'leave' } },
    ]);
  });
});

describe('confirmationOf and requestOf', () => {
  it('leaving says the user loses access and is signed out, and posts to the leave route', () => {
    const leave = confirmationOf({ kind: 'leave' });
    expect(leave).toMatchObject({ title: 'Leave this account?', danger: true });
    expect(leave.body).toMatch(/^You lose access to this account/);
    expect(leave.body).toMatch(/signed out/);
    expect(requestOf({ kind: 'leave' })).toEqual({ method: 'POST', path: '/api/team/leave' });
  });

  it('a role change names the person and the new role, and patches the member', () => {
    const promote = { kind: 'role', id: 'usr/1', email: 'cat@example.com', you: false } as const;
    expect(confirmationOf({ ...promote, role: 'owner' })).toMatchObject({
      title: 'Make cat@example.com an owner?',
      confirmLabel: 'Make owner',
      danger: false,
    });
    expect(confirmationOf({ ...promote, role: 'member' })).toMatchObject({
      title: 'Make cat@example.com a member?',
      confirmLabel: 'Make member',
      danger: true,
    });
    expect(confirmationOf({ ...promote, you: true, role: 'member' }).body).toMatch(
      /^You keep using this account but can no longer manage its team/,
    );
    expect(requestOf({ ...promote, role: 'owner' })).toEqual({
      method: 'PATCH',
      path: '/api/team/members/usr%2F1',
      body: { role: 'owner' },
    });
  });

  it('removal and revocation keep their routes and words', () => {
    expect(requestOf({ kind: 'remove', id: 'usr_1', email: 'c@example.com' })).toEqual({
      method: 'DELETE',
      path: '/api/team/members/usr_1',
    });
    expect(requestOf({ kind: 'invitation', id: 'inv_1', email: 'c@example.com' })).toEqual({
      method: 'DELETE',
      path: '/api/team/invitations/inv_1',
    });
    expect(confirmationOf({ kind: 'remove', id: 'usr_1', email: 'c@example.com' })).toEqual({
      title: 'Remove this member?',
      body: 'c@example.com is signed out and can no longer use this account; the API keys they made are revoked.',
      confirmLabel: 'Remove',
      danger: true,
    });
    expect(confirmationOf({ kind: 'invitation', id: 'inv_1', email: 'c@example.com' }).title).toBe(
      'Revoke this invitation?',
    );
  });
});

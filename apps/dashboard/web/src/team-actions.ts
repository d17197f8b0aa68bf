/** A customer's place in their account (ADR 0604). */
export type AccountRole = 'owner' | 'member';

export interface TeamMember {
  id: string;
  email: string;
  role: AccountRole;
  joined_at: string;
  you: boolean;
}

/** A change the Team page asks to confirm before it sends it. */
export type TeamChange =
  | { kind: 'role'; id: string; email: string; you: boolean; role: AccountRole }
  | { kind: 'remove'; id: string; email: string }
  | { kind: 'leave' }
  | { kind: 'invitation'; id: string; email: string };

/** The buttons of one member's row: each opens the confirmation of its change. */
export interface MemberAction {
  label: string;
  danger: boolean;
  change: TeamChange;
}

/**
 * What the viewer may do on a member's row. An owner changes anyone's role and removes anyone,
 * and leaves on their own row; a member only leaves, on their own row. The sole owner is offered
 * neither stepping down nor leaving (the server refuses both with `last_owner`).
 */
export function memberActions(
  yourRole: AccountRole,
  member: TeamMember,
  members: readonly TeamMember[],
): MemberAction[] {
  const leave: MemberAction = { label: 'Leave', danger: true, change: { kind: 'leave' } };
  if (yourRole !== 'owner') return member.you ? [leave] : [];
  if (member.you && isSoleOwner(member, members)) return [];
  const to: AccountRole = member.role === 'owner' ? 'member' : 'owner';
  const role: MemberAction = {
    label: to === 'owner' ? 'Make owner' : 'Make member',
    danger: false,
    change: { kind: 'role', id: member.id, email: member.email, you: member.you, role: to },
  };
  if (member.you) return [role, leave];
  return [
    role,
    {
      label: 'Remove',
      danger: true,
      change: { kind: 'remove', id: member.id, email: member.email },
    },
  ];
}

export function isSoleOwner(member: TeamMember, members: readonly TeamMember[]): boolean {
  return member.role === 'owner' && members.filter((m) => m.role === 'owner').length === 1;
}

/** The note for the sole owner, who can neither leave nor step down. */
export function soleOwnerNote(members: readonly TeamMember[]): string | undefined {
  const you = members.find((m) => m.you);
  return you && isSoleOwner(you, members)
    ? 'You are the only owner: to leave or become a member, make another member an owner first.'
    : undefined;
}

/** The confirmation dialog of a change. */
export function confirmationOf(change: TeamChange): {
  title: string;
  body: string;
  confirmLabel: string;
  danger: boolean;
} {
  switch (change.kind) {
    case 'invitation':
      return {
        title: 'Revoke this invitation?',
        body: `The link sent to ${change.email} stops working.`,
        confirmLabel: 'Revoke invitation',
        danger: true,
      };
    case 'remove':
      return {
        title: 'Remove this member?',
        body: `${change.email} is signed out and can no longer use this account; the API keys they made are revoked.`,
        confirmLabel: 'Remove',
        danger: true,
      };
    case 'leave':
      return {
        title: 'Leave this account?',
        body: 'You lose access to this account at once: its balance, tokens, webhooks and keys. You are signed out and your dashboard user is removed; only a new invitation from an owner lets you back in.',
        confirmLabel: 'Leave account',
        danger: true,
      };
    case 'role':
      if (change.role === 'owner')
        return {
          title: `Make ${change.email} an owner?`,
          body: `${change.email} can then invite and remove people and change anyone's role, yours included.`,
          confirmLabel: 'Make owner',
          danger: false,
        };
      return change.you
        ? {
            title: 'Become a member?',
            body: 'You keep using this account but can no longer manage its team; only an owner can make you an owner again.',
            confirmLabel: 'Make me a member',
            danger: true,
          }
        : {
            title: `Make ${change.email} a member?`,
            body: `${change.email} keeps using this account but can no longer manage its team.`,
            confirmLabel: 'Make member',
            danger: true,
          };
  }
}

/** The BFF call that makes a change (ADR 0604). */
export function requestOf(change: TeamChange): {
  method: 'PATCH' | 'DELETE' | 'POST';
  path: string;
  body?: { role: AccountRole };
} {
  switch (change.kind) {
    case 'role':
      return {
        method: 'PATCH',
        path: `/api/team/members/${encodeURIComponent(change.id)}`,
        body: { role: change.role },
      };
    case 'remove':
      return { method: 'DELETE', path: `/api/team/members/${encodeURIComponent(change.id)}` };
    case 'leave':
      return { method: 'POST', path: '/api/team/leave' };
    case 'invitation':
      return { method: 'DELETE', path: `/api/team/invitations/${encodeURIComponent(change.id)}` };
  }
}

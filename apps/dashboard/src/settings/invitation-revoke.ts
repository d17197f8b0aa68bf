import { DomainError } from '@meridian/errors';
import type { InvitationsRepository } from './invitations.repository';

/**
 * An invitation's revoke, the operator's sign-up ones and a team's alike (`accountId` null: the
 * operator's): the invitation is kept, set aside as `revoked` (`InvitationsRepository.revoke`),
 * so its link says it was revoked and the history stays. 404 `invitation_not_found` for an id
 * the scope has none of (another account's included); a repeat 409 `already_revoked`, as a
 * repeated key revoke (README); one used or set aside otherwise 409 `invitation_not_pending`.
 */
export async function revokeInvitation(
  invitations: InvitationsRepository,
  accountId: string | null,
  id: string,
  at: Date,
): Promise<void> {
  const outcome = await invitations.revoke(accountId, id, at);
  if (outcome === true) return;
  if (outcome === 'unknown')
    throw new DomainError(
      'invitation_not_found',
      'not_found',
      accountId === null
        ? 'there is no sign-up invitation with this id'
        : 'this account has no invitation with this id',
    );
  if (outcome === 'revoked')
    throw new DomainError('already_revoked', 'conflict', 'this invitation is revoked already');
  throw new DomainError(
    'invitation_not_pending',
    'conflict',
    outcome === 'used'
      ? accountId === null
        ? 'this invitation has been used: its account exists, nothing to revoke'
        : 'this invitation has been used: its user is in the team, nothing to revoke'
      : 'this invitation can no longer be used (its email has an account, or a newer one replaced it)',
  );
}

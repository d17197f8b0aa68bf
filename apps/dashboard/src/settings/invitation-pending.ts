import { DomainError } from '@meridian/errors';
import { utcMinute } from '@meridian/time';
import type { InvitationsRepository } from './invitations.repository';

/**
 * The refusal of a second pending invitation of one email (QA QQ, Low 3; the operator's too):
 * 409 `invitation_pending` naming the pending one. Its link was shown once and is not kept
 * (only its hash), so it cannot be answered again: whoever invited is told it exists, and
 * revokes it to make a new link. `accountId` null: the operator's sign-up invitations.
 */
export async function invitationPending(
  invitations: InvitationsRepository,
  accountId: string | null,
  email: string,
): Promise<DomainError> {
  return invitationPendingError(accountId, await invitations.pendingFor(accountId, email));
}

/**
 * The refusal's words. Its end is said as the invitations table says it ("2026-12-10 08:02
 * UTC", the page's one formatter, QA L7), not as an ISO timestamp; the ISO stays in
 * `invitation.expires_at`.
 */
export function invitationPendingError(
  accountId: string | null,
  pending: { id: string; expiresAt: Date } | undefined | null,
): DomainError {
  const until = pending ? ` (until ${utcMinute(pending.expiresAt)})` : '';
  const to = accountId === null ? 'to sign up' : 'to this account';
  return new DomainError(
    'invitation_pending',
    'conflict',
    `this email already has a pending invitation ${to}${until}; revoke it to send a new link`,
    {
      details: {
        ...(pending
          ? { invitation: { id: pending.id, expires_at: pending.expiresAt.toISOString() } }
          : {}),
        fields: {
          email: `already invited${until}: revoke that invitation below to send a new link`,
        },
      },
    },
  );
}

import { formatDateTime } from '../format';
import { CopyButton } from './copy-button';
import { Notice } from './ui';

/** An invitation as the BFF answers its creation: its code is shown once, in the link. */
export interface CreatedInvitation {
  email: string;
  code: string;
  expires_at: string;
}

/** The sign-up link of an invitation just made (the operator's or a team owner's), to copy. */
export function InvitationLinkNotice({ invitation }: { invitation: CreatedInvitation }) {
  const link = `${window.location.origin}/sign-up?invitation=${encodeURIComponent(invitation.code)}`;
  return (
    <Notice tone="ok">
      Send this link to {invitation.email} (valid until {formatDateTime(invitation.expires_at)},
      shown once): <code className="url">{link}</code>{' '}
      <CopyButton value={link} label="Copy invitation link" />
    </Notice>
  );
}

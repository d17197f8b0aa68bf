import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../api';
import { ConfirmDialog } from '../components/confirm-dialog';
import { InvitationLinkNotice } from '../components/invitation-link';
import { Field } from '../components/field';
import { TokensToRoll, type TokenToRoll } from '../components/tokens-to-roll';
import { Badge, Card, Empty, ErrorState, Loading, Notice, PageHeader } from '../components/ui';
import { formatDateTime } from '../format';
import { placeErrors } from '../form-errors';
import { useSession } from '../session';
import {
  confirmationOf,
  memberActions,
  requestOf,
  soleOwnerNote,
  type AccountRole,
  type TeamChange,
  type TeamMember,
} from '../team-actions';
import { useSubmission } from '../use-submission';

/** `GET /api/team` (ADR 0604). */
interface Team {
  account_id: string;
  your_role: AccountRole;
  members: TeamMember[];
  invitations: Array<{
    id: string;
    email: string;
    role: AccountRole;
    created_at: string;
    expires_at: string;
  }>;
}

/**
 * The account's team: its users (owners first) and pending invitations. An owner invites by
 * email (a link shown once), revokes an invitation, changes a user's role and removes a user,
 * each after a confirmation; a member sees the same lists and may only leave.
 */
export function TeamPage() {
  const client = useQueryClient();
  const { signedOut } = useSession();
  const team = useQuery({ queryKey: ['team'], queryFn: () => api<Team>('GET', '/api/team') });
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<AccountRole>('member');
  const invite = useSubmission({
    values: { email, role },
    send: (body) =>
      api<{ email: string; code: string; expires_at: string }>(
        'POST',
        '/api/team/invitations',
        body,
      ),
    onSuccess: () => {
      setEmail('');
      void client.invalidateQueries({ queryKey: ['team'] });
    },
  });
  const inviteErrors = placeErrors(invite.error, { email: ['email'] });
  const [pending, setPending] = useState<TeamChange | undefined>();
  const [removed, setRemoved] = useState<{ email: string; tokens: TokenToRoll[] } | undefined>();
  const change = useMutation({
    mutationFn: (target: TeamChange) => {
      const request = requestOf(target);
      return api<{ access_tokens_to_roll?: TokenToRoll[] } | null>(
        request.method,
        request.path,
        request.body,
      );
    },
    onSuccess: (answer, target) => {
      setPending(undefined);
      // A removal names the access tokens the member made or rolled: the owner's to roll.
      if (target.kind === 'remove')
        setRemoved(
          answer?.access_tokens_to_roll?.length
            ? { email: target.email, tokens: answer.access_tokens_to_roll }
            : undefined,
        );
      // Leaving ended this session: the sign-in screen. A change of your own role changes the
      // session's account role.
      if (target.kind === 'leave') return signedOut();
      void client.invalidateQueries({ queryKey: ['team'] });
      if (target.kind === 'role' && target.you)
        void client.invalidateQueries({ queryKey: ['session'] });
    },
  });
  const confirmation = pending && confirmationOf(pending);
  if (team.isPending)
    return (
      <>
        <PageHeader title="Team" />
        <Loading />
      </>
    );
  if (team.isError)
    return (
      <>
        <PageHeader title="Team" />
        <ErrorState error={team.error} retry={() => void team.refetch()} />
      </>
    );
  const owner = team.data.your_role === 'owner';
  return (
    <>
      <PageHeader
        title="Team"
        description={
          owner
            ? 'Everyone here uses this account: its balance, tokens, webhooks and keys. Owners manage the team.'
            : 'Everyone here uses this account. Only an owner can invite or remove people.'
        }
      />
      {owner && soleOwnerNote(team.data.members) && (
        <Notice tone="info">{soleOwnerNote(team.data.members)}</Notice>
      )}
      <Card title="Members">
        <table className="table table-stack" data-testid="team-members">
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">Joined</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {team.data.members.map((m) => (
              <tr key={m.id}>
                <td data-label="Email">
                  {m.email} {m.you && <Badge>you</Badge>}
                </td>
                <td data-label="Role">{m.role === 'owner' ? 'Owner' : 'Member'}</td>
                <td data-label="Joined">{formatDateTime(m.joined_at)}</td>
                <td className="num">
                  <div className="actions">
                    {memberActions(team.data.your_role, m, team.data.members).map((action) => (
                      <button
                        key={action.label}
                        type="button"
                        className={`button button-small ${action.danger ? 'button-danger' : 'button-secondary'}`}
                        onClick={() => setPending(action.change)}
                      >
                        {action.label}
                        {action.change.kind !== 'leave' && (
                          <span className="visually-hidden"> {m.email}</span>
                        )}
                      </button>
                    ))}
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </Card>
      <Card title="Pending invitations">
        {team.data.invitations.length === 0 ? (
          <Empty title="No pending invitations" />
        ) : (
          <table className="table table-stack" data-testid="team-invitations">
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Expires</th>
                {owner && (
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {team.data.invitations.map((i) => (
                <tr key={i.id}>
                  <td data-label="Email">{i.email}</td>
                  <td data-label="Role">{i.role === 'owner' ? 'Owner' : 'Member'}</td>
                  <td data-label="Expires">{formatDateTime(i.expires_at)}</td>
                  {owner && (
                    <td className="num">
                      <button
                        type="button"
                        className="button button-danger button-small"
                        onClick={() => setPending({ kind: 'invitation', id: i.id, email: i.email })}
                      >
                        Revoke<span className="visually-hidden"> invitation of {i.email}</span>
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Card>
      {owner && (
        <Card title="Invite a colleague">
          <form onSubmit={invite.submit} className="form-row" noValidate>
            <Field label="Email" error={inviteErrors.fields.email}>
              <input type="email" value={email} onChange={(e) => setEmail(e.target.value)} />
            </Field>
            <Field label="Role">
              <select value={role} onChange={(e) => setRole(e.target.value as AccountRole)}>
                <option value="member">Member</option>
                <option value="owner">Owner</option>
              </select>
            </Field>
            <button type="submit" className="button" disabled={invite.pending}>
              Create invitation
            </button>
          </form>
          {inviteErrors.notice && <Notice tone="bad">{inviteErrors.notice}</Notice>}
          {invite.succeeded && invite.data && <InvitationLinkNotice invitation={invite.data} />}
        </Card>
      )}
      {change.error && <Notice tone="bad">{change.error.message}</Notice>}
      {removed && (
        <TokensToRoll key={removed.email} email={removed.email} tokens={removed.tokens} />
      )}
      <ConfirmDialog
        open={confirmation !== undefined}
        title={confirmation?.title ?? ''}
        confirmLabel={confirmation?.confirmLabel ?? ''}
        danger={confirmation?.danger}
        busy={change.isPending}
        onCancel={() => setPending(undefined)}
        onConfirm={() => pending && change.mutate(pending)}
      >
        <p>{confirmation?.body}</p>
      </ConfirmDialog>
    </>
  );
}

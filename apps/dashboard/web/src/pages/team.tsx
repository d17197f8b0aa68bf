import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../api';
import { ConfirmDialog } from '../components/confirm-dialog';
import { CopyButton } from '../components/copy-button';
import { Field } from '../components/field';
import { Badge, Card, Empty, ErrorState, Loading, Notice, PageHeader } from '../components/ui';
import { formatDateTime } from '../format';
import { placeErrors } from '../form-errors';
import { useSubmission } from '../use-submission';

type AccountRole = 'owner' | 'member';

/** `GET /api/team` (ADR 0604). */
interface Team {
  account_id: string;
  your_role: AccountRole;
  members: Array<{ id: string; email: string; role: AccountRole; joined_at: string; you: boolean }>;
  invitations: Array<{
    id: string;
    email: string;
    role: AccountRole;
    created_at: string;
    expires_at: string;
  }>;
}

type Doomed =
  | { kind: 'member'; id: string; email: string; you: boolean }
  | { kind: 'invitation'; id: string; email: string };

/**
 * The account's team: its users (owners first) and pending invitations. An owner invites by
 * email (a link shown once), revokes an invitation and removes a user after a confirmation;
 * a member sees the same lists read-only.
 */
export function TeamPage() {
  const client = useQueryClient();
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
  const link = invite.data
    ? `${window.location.origin}/sign-up?invitation=${encodeURIComponent(invite.data.code)}`
    : '';
  const [doomed, setDoomed] = useState<Doomed | undefined>();
  const remove = useMutation({
    mutationFn: (target: Doomed) =>
      api(
        'DELETE',
        target.kind === 'member'
          ? `/api/team/members/${encodeURIComponent(target.id)}`
          : `/api/team/invitations/${encodeURIComponent(target.id)}`,
      ),
    onSuccess: () => {
      setDoomed(undefined);
      void client.invalidateQueries({ queryKey: ['team'] });
    },
  });
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
      <Card title="Members">
        <table className="table table-stack" data-testid="team-members">
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">Joined</th>
              {owner && (
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              )}
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
                {owner && (
                  <td className="num">
                    <button
                      type="button"
                      className="button button-danger button-small"
                      onClick={() =>
                        setDoomed({ kind: 'member', id: m.id, email: m.email, you: m.you })
                      }
                    >
                      {m.you ? 'Leave' : 'Remove'}
                      <span className="visually-hidden"> {m.email}</span>
                    </button>
                  </td>
                )}
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
                        onClick={() => setDoomed({ kind: 'invitation', id: i.id, email: i.email })}
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
          {invite.succeeded && invite.data && (
            <Notice tone="ok">
              Send this link to {invite.data.email} (valid until{' '}
              {formatDateTime(invite.data.expires_at)}, shown once):{' '}
              <code className="url">{link}</code>{' '}
              <CopyButton value={link} label="Copy invitation link" />
            </Notice>
          )}
        </Card>
      )}
      {remove.error && <Notice tone="bad">{remove.error.message}</Notice>}
      <ConfirmDialog
        open={doomed !== undefined}
        title={
          doomed?.kind === 'invitation'
            ? 'Revoke this invitation?'
            : doomed?.you
              ? 'Leave this account?'
              : 'Remove this member?'
        }
        confirmLabel={doomed?.kind === 'invitation' ? 'Revoke invitation' : 'Remove'}
        danger
        busy={remove.isPending}
        onCancel={() => setDoomed(undefined)}
        onConfirm={() => doomed && remove.mutate(doomed)}
      >
        <p>
          {doomed?.kind === 'invitation'
            ? `The link sent to ${doomed.email} stops working.`
            : `${doomed?.email ?? ''} is signed out and can no longer use this account.`}
        </p>
      </ConfirmDialog>
    </>
  );
}

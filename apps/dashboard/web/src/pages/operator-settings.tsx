import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../api';
import { ConfirmDialog } from '../components/confirm-dialog';
import { InvitationLinkNotice } from '../components/invitation-link';
import { Field } from '../components/field';
import { Card, Empty, ErrorState, Loading, Notice, PageHeader } from '../components/ui';
import { formatDateTime } from '../format';
import { placeErrors } from '../form-errors';
import {
  shownSignupMode,
  SIGNUP_MODE_LABELS,
  signupModeSaved,
  type SignupMode,
} from '../signup-mode';
import { useSubmission } from '../use-submission';

/** `GET /api/operator/invitations`: a pending sign-up invitation (never its code). */
interface PendingInvitation {
  id: string;
  email: string;
  created_at: string;
  expires_at: string;
  created_by: { id: string; email: string | null };
}

export function OperatorSettingsPage() {
  const client = useQueryClient();
  const settings = useQuery({
    queryKey: ['operator-settings'],
    queryFn: () => api<{ signup_mode: SignupMode }>('GET', '/api/operator/settings'),
  });
  const setMode = useMutation({
    mutationFn: (signup_mode: SignupMode) => api('PUT', '/api/operator/settings', { signup_mode }),
    onSuccess: () => void client.invalidateQueries({ queryKey: ['operator-settings'] }),
  });
  const [email, setEmail] = useState('');
  const invite = useSubmission({
    values: { email },
    send: (body) =>
      api<{ email: string; code: string; expires_at: string }>(
        'POST',
        '/api/operator/invitations',
        body,
      ),
    onSuccess: () => {
      setEmail('');
      void client.invalidateQueries({ queryKey: ['operator-invitations'] });
    },
  });
  const inviteErrors = placeErrors(invite.error, { email: ['email'] });
  const invitations = useQuery({
    queryKey: ['operator-invitations'],
    queryFn: () => api<{ items: PendingInvitation[] }>('GET', '/api/operator/invitations'),
  });
  const [doomed, setDoomed] = useState<PendingInvitation | undefined>();
  const [revoked, setRevoked] = useState<string | undefined>();
  const revoke = useMutation({
    mutationFn: (invitation: PendingInvitation) =>
      api('DELETE', `/api/operator/invitations/${encodeURIComponent(invitation.id)}`),
    onSuccess: (_answer, invitation) => setRevoked(invitation.email),
    onSettled: () => {
      setDoomed(undefined);
      // A 409 too (revoked or used meanwhile): the list shows where things stand.
      void client.invalidateQueries({ queryKey: ['operator-invitations'] });
    },
  });
  return (
    <>
      <PageHeader title="Sign-up and invitations" />
      <Card title="Who may sign up">
        {settings.isPending ? (
          <Loading />
        ) : settings.isError ? (
          <ErrorState error={settings.error} />
        ) : (
          <>
            <fieldset className="fieldset">
              <legend>Sign-up mode</legend>
              {(['open', 'invite'] as const).map((mode) => (
                <label key={mode} className="check">
                  <input
                    type="radio"
                    name="signup-mode"
                    checked={
                      shownSignupMode(settings.data.signup_mode, {
                        pending: setMode.isPending,
                        mode: setMode.variables,
                      }) === mode
                    }
                    disabled={setMode.isPending}
                    onChange={() => setMode.mutate(mode)}
                  />
                  {SIGNUP_MODE_LABELS[mode]}
                </label>
              ))}
            </fieldset>
            {setMode.isSuccess && <Notice tone="ok">{signupModeSaved(setMode.variables)}</Notice>}
            {setMode.error && <Notice tone="bad">{setMode.error.message}</Notice>}
          </>
        )}
      </Card>
      <Card title="Invite someone">
        <form onSubmit={invite.submit} className="form-row" noValidate>
          <Field label="Email" error={inviteErrors.fields.email}>
            <input type="email" value={email} onChange={(e) => setEmail(e.target.value)} />
          </Field>
          <button type="submit" className="button" disabled={invite.pending}>
            Create invitation
          </button>
        </form>
        {inviteErrors.notice && <Notice tone="bad">{inviteErrors.notice}</Notice>}
        {invite.succeeded && invite.data && <InvitationLinkNotice invitation={invite.data} />}
      </Card>
      <Card title="Pending invitations">
        {revoked && (
          <Notice tone="ok">
            The invitation of {revoked} is revoked: its link no longer works.
          </Notice>
        )}
        {revoke.error && <Notice tone="bad">{revoke.error.message}</Notice>}
        {invitations.isPending ? (
          <Loading />
        ) : invitations.isError ? (
          <ErrorState error={invitations.error} retry={() => void invitations.refetch()} />
        ) : invitations.data.items.length === 0 ? (
          <Empty title="No pending invitations" />
        ) : (
          <table className="table table-stack" data-testid="operator-invitations">
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Created</th>
                <th scope="col">Expires</th>
                <th scope="col">By</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {invitations.data.items.map((i) => (
                <tr key={i.id}>
                  <td data-label="Email">{i.email}</td>
                  <td data-label="Created">
                    <span className="nowrap">{formatDateTime(i.created_at)}</span>
                  </td>
                  <td data-label="Expires">
                    <span className="nowrap">{formatDateTime(i.expires_at)}</span>
                  </td>
                  <td data-label="By">{i.created_by.email ?? i.created_by.id}</td>
                  <td className="num">
                    <button
                      type="button"
                      className="button button-danger button-small"
                      onClick={() => {
                        setRevoked(undefined);
                        setDoomed(i);
                      }}
                    >
                      Revoke<span className="visually-hidden"> invitation of {i.email}</span>
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Card>
      <ConfirmDialog
        open={doomed !== undefined}
        title="Revoke this invitation?"
        confirmLabel="Revoke invitation"
        danger
        busy={revoke.isPending}
        onCancel={() => setDoomed(undefined)}
        onConfirm={() => doomed && revoke.mutate(doomed)}
      >
        <p>
          The link sent to {doomed?.email} stops working now: it says it was revoked. Invite the
          email again to send a new link.
        </p>
      </ConfirmDialog>
    </>
  );
}

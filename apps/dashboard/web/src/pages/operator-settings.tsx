import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../api';
import { InvitationLinkNotice } from '../components/invitation-link';
import { Field } from '../components/field';
import { Card, ErrorState, Loading, Notice, PageHeader } from '../components/ui';
import { placeErrors } from '../form-errors';
import { useSubmission } from '../use-submission';

export function OperatorSettingsPage() {
  const client = useQueryClient();
  const settings = useQuery({
    queryKey: ['operator-settings'],
    queryFn: () => api<{ signup_mode: 'open' | 'invite' }>('GET', '/api/operator/settings'),
  });
  const setMode = useMutation({
    mutationFn: (signup_mode: string) => api('PUT', '/api/operator/settings', { signup_mode }),
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
    onSuccess: () => setEmail(''),
  });
  const inviteErrors = placeErrors(invite.error, { email: ['email'] });
  return (
    <>
      <PageHeader title="Sign-up and invitations" />
      <Card title="Who may sign up">
        {settings.isPending ? (
          <Loading />
        ) : settings.isError ? (
          <ErrorState error={settings.error} />
        ) : (
          <fieldset className="fieldset">
            <legend>Sign-up mode</legend>
            {(['open', 'invite'] as const).map((mode) => (
              <label key={mode} className="check">
                <input
                  type="radio"
                  name="signup-mode"
                  checked={settings.data.signup_mode === mode}
                  onChange={() => setMode.mutate(mode)}
                />
                {mode === 'open' ? 'Open: anyone can create an account' : 'Invitation only'}
              </label>
            ))}
          </fieldset>
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
    </>
  );
}

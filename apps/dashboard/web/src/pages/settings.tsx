import { useState } from 'react';
import { api } from '../api';
import { Field } from '../components/field';
import { Card, Notice, PageHeader } from '../components/ui';
import { placeErrors } from '../form-errors';
import { useSession } from '../session';
import { useSubmission } from '../use-submission';

export function SettingsPage() {
  const { session } = useSession();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const change = useSubmission({
    values: { current_password: current, new_password: next },
    send: (body) => api('POST', '/api/auth/password', body),
    check: (values) => ({
      ...(values.current_password ? {} : { current_password: 'Enter your current password.' }),
      ...(values.new_password.length >= 10 ? {} : { new_password: 'Use at least 10 characters.' }),
    }),
    onSuccess: () => {
      setCurrent('');
      setNext('');
    },
  });
  const errors = placeErrors(change.error, {
    current: ['current_password'],
    next: ['new_password'],
  });
  return (
    <>
      <PageHeader title="Settings" description={`Signed in as ${session.user?.email ?? ''}`} />
      <Card title="Change password">
        <form onSubmit={change.submit} className="form-narrow" noValidate>
          {change.succeeded && (
            <Notice tone="ok">Password changed. Your other sessions were signed out.</Notice>
          )}
          {errors.notice && <Notice tone="bad">{errors.notice}</Notice>}
          <Field label="Current password" error={errors.fields.current}>
            <input
              type="password"
              autoComplete="current-password"
              value={current}
              onChange={(e) => setCurrent(e.target.value)}
            />
          </Field>
          <Field label="New password" hint="At least 10 characters." error={errors.fields.next}>
            <input
              type="password"
              autoComplete="new-password"
              value={next}
              onChange={(e) => setNext(e.target.value)}
            />
          </Field>
          <button type="submit" className="button" disabled={change.pending}>
            Change password
          </button>
        </form>
      </Card>
    </>
  );
}

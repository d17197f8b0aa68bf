import { useState, type FormEvent } from 'react';
import { api, ApiError } from '../api';
import { Field } from '../components/field';
import { Card, Notice, PageHeader } from '../components/ui';
import { useSession } from '../session';

export function SettingsPage() {
  const { session } = useSession();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [error, setError] = useState<ApiError | undefined>();
  const [done, setDone] = useState(false);
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    setDone(false);
    try {
      await api('POST', '/api/auth/password', { current_password: current, new_password: next });
      setDone(true);
      setCurrent('');
      setNext('');
    } catch (caught) {
      if (caught instanceof ApiError) setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <PageHeader title="Settings" description={`Signed in as ${session.user?.email ?? ''}`} />
      <Card title="Change password">
        <form onSubmit={(e) => void submit(e)} className="form-narrow" noValidate>
          {done && (
            <Notice tone="ok">Password changed. Your other sessions were signed out.</Notice>
          )}
          {error && !Object.keys(error.fields).length && (
            <Notice tone="bad">{error.message}</Notice>
          )}
          <Field label="Current password" error={error?.fields['current_password']}>
            <input
              type="password"
              autoComplete="current-password"
              value={current}
              onChange={(e) => setCurrent(e.target.value)}
            />
          </Field>
          <Field
            label="New password"
            hint="At least 10 characters."
            error={error?.fields['new_password']}
          >
            <input
              type="password"
              autoComplete="new-password"
              value={next}
              onChange={(e) => setNext(e.target.value)}
            />
          </Field>
          <button type="submit" className="button" disabled={busy}>
            Change password
          </button>
        </form>
      </Card>
    </>
  );
}

import { useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router-dom';
import { api, ApiError } from '../api';
import { Field } from '../components/field';
import { Notice } from '../components/ui';
import { useSession } from '../session';

function AuthFrame(props: { title: string; children: React.ReactNode }) {
  return (
    <main id="main" className="auth-page">
      <div className="auth-card">
        <p className="brand">
          <span className="brand-mark" aria-hidden="true">
            ◆
          </span>{' '}
          Meridian
        </p>
        <h1>{props.title}</h1>
        {props.children}
      </div>
    </main>
  );
}

function useAuthForm(path: string, extra: () => Record<string, string | undefined>) {
  const { refresh } = useSession();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<ApiError | undefined>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await api('POST', path, { email, password, ...extra() });
      await refresh();
    } catch (caught) {
      setError(
        caught instanceof ApiError
          ? caught
          : new ApiError(0, 'network', 'the server is not reachable', {}, {}),
      );
    } finally {
      setBusy(false);
    }
  };
  return { email, setEmail, password, setPassword, error, busy, submit };
}

export function SignInPage() {
  const { session } = useSession();
  const form = useAuthForm('/api/auth/sign-in', () => ({}));
  return (
    <AuthFrame title="Sign in">
      <form onSubmit={(e) => void form.submit(e)} noValidate>
        {form.error && !Object.keys(form.error.fields).length && (
          <Notice tone="bad">{form.error.message}</Notice>
        )}
        <Field label="Email" error={form.error?.fields['email']}>
          <input
            type="email"
            autoComplete="email"
            required
            value={form.email}
            onChange={(e) => form.setEmail(e.target.value)}
          />
        </Field>
        <Field label="Password" error={form.error?.fields['password']}>
          <input
            type="password"
            autoComplete="current-password"
            required
            value={form.password}
            onChange={(e) => form.setPassword(e.target.value)}
          />
        </Field>
        <button type="submit" className="button button-block" disabled={form.busy}>
          {form.busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <p className="muted auth-switch">
        {session.signup_mode === 'open' ? (
          <>
            New here? <Link to="/sign-up">Create an account</Link>
          </>
        ) : (
          <>Sign-up is by invitation. Have a link? Open it to create your account.</>
        )}
      </p>
    </AuthFrame>
  );
}

export function SignUpPage() {
  const [params] = useSearchParams();
  const invitation = params.get('invitation') ?? undefined;
  const [name, setName] = useState('');
  const form = useAuthForm('/api/auth/sign-up', () => ({
    invitation,
    name: name.trim() || undefined,
  }));
  return (
    <AuthFrame title="Create your account">
      <form onSubmit={(e) => void form.submit(e)} noValidate>
        {form.error && !Object.keys(form.error.fields).length && (
          <Notice tone="bad">{form.error.message}</Notice>
        )}
        <Field label="Name (optional)" hint="Shown to operators; your email is used when empty.">
          <input
            type="text"
            autoComplete="organization"
            value={name}
            onChange={(e) => setName(e.target.value)}
          />
        </Field>
        <Field label="Email" error={form.error?.fields['email']}>
          <input
            type="email"
            autoComplete="email"
            required
            value={form.email}
            onChange={(e) => form.setEmail(e.target.value)}
          />
        </Field>
        <Field
          label="Password"
          hint="At least 10 characters."
          error={form.error?.fields['password']}
        >
          <input
            type="password"
            autoComplete="new-password"
            required
            value={form.password}
            onChange={(e) => form.setPassword(e.target.value)}
          />
        </Field>
        <button type="submit" className="button button-block" disabled={form.busy}>
          {form.busy ? 'Creating…' : 'Create account'}
        </button>
      </form>
      <p className="muted auth-switch">
        Have an account? <Link to="/">Sign in</Link>
      </p>
    </AuthFrame>
  );
}

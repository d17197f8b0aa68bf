import { useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Link, useSearchParams } from 'react-router-dom';
import { api, ApiError } from '../api';
import { Field } from '../components/field';
import { Loading, Notice, usePageTitle } from '../components/ui';
import { placeErrors } from '../form-errors';
import { INVITATION_WORDS, invitationKind, signUpView, type InvitationLookup } from '../invitation';
import { useSession } from '../session';
import { useSubmission } from '../use-submission';

function AuthFrame(props: { title: string; children: React.ReactNode }) {
  usePageTitle(props.title);
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

/**
 * Sign-in and sign-up: one request at a time (useSubmission; a double click or a second Enter
 * sends nothing more), its messages under the fields they name, the rest in the notice.
 */
function useAuthForm(
  path: string,
  extra: () => Record<string, string | undefined>,
  withName = false,
) {
  const { refresh } = useSession();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const submission = useSubmission({
    values: { email, password, ...extra() },
    send: async (body) => {
      try {
        await api('POST', path, body);
      } catch (caught) {
        throw caught instanceof ApiError
          ? caught
          : new ApiError(0, 'network', 'the server is not reachable', {}, {});
      }
      await refresh();
    },
  });
  const errors = placeErrors(submission.error, {
    email: ['email'],
    password: ['password'],
    name: withName ? ['name'] : [],
  });
  return {
    email,
    setEmail,
    password,
    setPassword,
    errors,
    busy: submission.pending,
    submit: submission.submit,
  };
}

export function SignInPage() {
  const { session } = useSession();
  const form = useAuthForm('/api/auth/sign-in', () => ({}));
  return (
    <AuthFrame title="Sign in">
      <form onSubmit={form.submit} noValidate>
        {form.errors.notice && <Notice tone="bad">{form.errors.notice}</Notice>}
        <Field label="Email" error={form.errors.fields.email}>
          <input
            type="email"
            autoComplete="email"
            required
            value={form.email}
            onChange={(e) => form.setEmail(e.target.value)}
          />
        </Field>
        <Field label="Password" error={form.errors.fields.password}>
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
  const { session } = useSession();
  const [params] = useSearchParams();
  const invitation = params.get('invitation') ?? undefined;
  const [name, setName] = useState('');
  const form = useAuthForm(
    '/api/auth/sign-up',
    () => ({
      invitation,
      name: name.trim() || undefined,
    }),
    true,
  );
  // An invitation link is checked on load: its email pre-filled and locked, or why it cannot
  // be used, before anyone types (and before a submit counts against the sign-up throttle).
  const lookup = useQuery({
    queryKey: ['invitation', invitation],
    queryFn: () =>
      api<InvitationLookup>('GET', `/api/auth/invitations/${encodeURIComponent(invitation!)}`),
    enabled: invitation !== undefined,
    retry: false,
    staleTime: Infinity,
  });
  const view = signUpView(
    session.signup_mode,
    invitation,
    lookup.isPending
      ? { state: 'pending' }
      : lookup.isError
        ? {
            state: 'failed',
            status: lookup.error instanceof ApiError ? lookup.error.status : 0,
            message: lookup.error.message,
          }
        : { state: 'found', invitation: lookup.data },
  );
  // A team's link joins an account: its page says so, not "Create your account" (ADR 0604).
  const words = INVITATION_WORDS[invitationKind(lookup.data)];
  const invitedEmail = view.kind === 'invited' ? view.email : undefined;
  const { setEmail } = form;
  useEffect(() => {
    if (invitedEmail !== undefined) setEmail(invitedEmail);
  }, [invitedEmail, setEmail]);
  if (view.kind === 'checking')
    return (
      <AuthFrame title={words.title}>
        <Loading label="Checking your invitation…" />
      </AuthFrame>
    );
  if (view.kind === 'closed' || view.kind === 'refused')
    return (
      <AuthFrame title={words.title}>
        <div data-testid="sign-up-closed">
          <Notice tone={view.kind === 'closed' ? 'info' : 'bad'}>{view.message}</Notice>
        </div>
        <p className="muted auth-switch">
          Have an account? <Link to="/">Sign in</Link>
        </p>
      </AuthFrame>
    );
  const joining = view.kind === 'invited' && view.team;
  return (
    <AuthFrame title={words.title}>
      <form onSubmit={form.submit} noValidate>
        {view.kind === 'invited' && (
          <div data-testid="invited">
            <Notice tone="info">{view.message}</Notice>
          </div>
        )}
        {form.errors.notice && <Notice tone="bad">{form.errors.notice}</Notice>}
        {/* The account's name: a team's link joins an account that has one, so none is asked. */}
        {!joining && (
          <Field
            label="Name (optional)"
            hint="Shown to operators; your email is used when empty."
            error={form.errors.fields.name}
          >
            <input
              type="text"
              autoComplete="organization"
              value={name}
              onChange={(e) => setName(e.target.value)}
            />
          </Field>
        )}
        <Field
          label="Email"
          hint={view.kind === 'invited' ? 'The invitation is for this email.' : undefined}
          error={form.errors.fields.email}
        >
          <input
            type="email"
            autoComplete="email"
            required
            readOnly={view.kind === 'invited'}
            value={form.email}
            onChange={(e) => form.setEmail(e.target.value)}
          />
        </Field>
        <Field label="Password" hint="At least 10 characters." error={form.errors.fields.password}>
          <input
            type="password"
            autoComplete="new-password"
            required
            value={form.password}
            onChange={(e) => form.setPassword(e.target.value)}
          />
        </Field>
        <button type="submit" className="button button-block" disabled={form.busy}>
          {form.busy ? words.busy : words.submit}
        </button>
      </form>
      <p className="muted auth-switch">
        Have an account? <Link to="/">Sign in</Link>
      </p>
    </AuthFrame>
  );
}

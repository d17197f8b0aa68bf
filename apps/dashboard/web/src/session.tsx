import { useQuery, useQueryClient, type QueryClient } from '@tanstack/react-query';
import { createContext, useContext, useEffect, type ReactNode } from 'react';
import { api, ApiError, setCsrfToken, setSessionGoneHandler } from './api';
import { ErrorState } from './components/ui';
import { sessionLoadView } from './session-load';

export interface SessionUser {
  id: string;
  email: string;
  role: 'customer' | 'operator';
  account_id: string | null;
  /** The customer's place in their account (ADR 0604); null for the operator. */
  account_role: 'owner' | 'member' | null;
}

export interface SessionState {
  signed_in: boolean;
  signup_mode: 'open' | 'invite';
  user?: SessionUser;
  csrf_token?: string;
}

const SessionContext = createContext<{
  session: SessionState;
  refresh: () => Promise<void>;
  /** Back to the sign-in screen at once, whatever the server said; cached data dropped. */
  signedOut: () => void;
} | null>(null);

export function SessionProvider(props: {
  children: (session: SessionState) => ReactNode;
  fallback: ReactNode;
}) {
  const client = useQueryClient();
  const query = useQuery({
    queryKey: ['session'],
    queryFn: async () => {
      const session = await api<SessionState>('GET', '/api/auth/session');
      setCsrfToken(session.csrf_token ?? '');
      return session;
    },
    staleTime: 60_000,
  });
  // Any call answered "session gone" ends the signed-in page: the sign-in screen, no stale data.
  useEffect(() => {
    setSessionGoneHandler(() => signedOutIn(client));
    return () => setSessionGoneHandler(() => undefined);
  }, [client]);
  // Until the session loads: the fallback while asking, a brief outage said and asked again on
  // its own with a backoff, any other failure said with Try again (session-load.ts).
  const failure =
    query.data || !query.isError
      ? null
      : query.error instanceof ApiError
        ? { status: query.error.status, code: query.error.code }
        : { status: 0, code: 'network' };
  const view = sessionLoadView(failure, query.errorUpdateCount);
  const { refetch } = query;
  const retryInMs = view.kind === 'brief_outage' ? view.retryInMs : null;
  useEffect(() => {
    if (retryInMs === null) return;
    const timer = window.setTimeout(() => void refetch(), retryInMs);
    return () => window.clearTimeout(timer);
  }, [retryInMs, query.errorUpdateCount, refetch]);
  if (!query.data) {
    if (view.kind === 'brief_outage')
      return (
        <div className="state" role="status" aria-live="polite" data-testid="session-unavailable">
          <span className="spinner" aria-hidden="true" />
          {view.message}
        </div>
      );
    if (view.kind === 'failed')
      return <ErrorState error={query.error} retry={() => void refetch()} />;
    return <>{props.fallback}</>;
  }
  const refresh = async () => {
    client.removeQueries({ predicate: (q) => q.queryKey[0] !== 'session' });
    await client.invalidateQueries({ queryKey: ['session'] });
  };
  return (
    <SessionContext.Provider
      value={{ session: query.data, refresh, signedOut: () => signedOutIn(client) }}
    >
      {props.children(query.data)}
    </SessionContext.Provider>
  );
}

function signedOutIn(client: QueryClient): void {
  setCsrfToken('');
  client.cancelQueries({ predicate: (q) => q.queryKey[0] !== 'session' }).catch(() => undefined);
  client.removeQueries({ predicate: (q) => q.queryKey[0] !== 'session' });
  const previous = client.getQueryData<SessionState>(['session']);
  client.setQueryData<SessionState>(['session'], {
    signed_in: false,
    signup_mode: previous?.signup_mode ?? 'open',
  });
}

export function useSession() {
  const value = useContext(SessionContext);
  if (!value) throw new Error('useSession outside SessionProvider');
  return value;
}

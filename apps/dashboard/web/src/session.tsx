import { useQuery, useQueryClient, type QueryClient } from '@tanstack/react-query';
import { createContext, useContext, useEffect, type ReactNode } from 'react';
import { api, setCsrfToken, setSessionGoneHandler } from './api';

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
  if (!query.data) return <>{props.fallback}</>;
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

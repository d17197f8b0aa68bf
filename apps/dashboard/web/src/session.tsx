import { useQuery, useQueryClient } from '@tanstack/react-query';
import { createContext, useContext, type ReactNode } from 'react';
import { api, setCsrfToken } from './api';

export interface SessionUser {
  id: string;
  email: string;
  role: 'customer' | 'operator';
  account_id: string | null;
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
  if (!query.data) return <>{props.fallback}</>;
  const refresh = async () => {
    client.removeQueries({ predicate: (q) => q.queryKey[0] !== 'session' });
    await client.invalidateQueries({ queryKey: ['session'] });
  };
  return (
    <SessionContext.Provider value={{ session: query.data, refresh }}>
      {props.children(query.data)}
    </SessionContext.Provider>
  );
}

export function useSession() {
  const value = useContext(SessionContext);
  if (!value) throw new Error('useSession outside SessionProvider');
  return value;
}

import { useInfiniteQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router-dom';
import { api } from '../api';
import { Card, Empty, ErrorState, Loading, PageHeader } from '../components/ui';
import { formatDateTime, planName } from '../format';

interface Found {
  account_id: string;
  name: string;
  email: string | null;
  type: string;
  plan: string | null;
  created_at: string;
}

interface FoundPage {
  items: Found[];
  next_cursor: string | null;
}

export function OperatorAccountsPage() {
  const [q, setQ] = useState('');
  const results = useInfiniteQuery({
    queryKey: ['operator-accounts', q],
    initialPageParam: '',
    queryFn: ({ pageParam }) => {
      const query = new URLSearchParams({ q });
      if (pageParam) query.set('cursor', pageParam);
      return api<FoundPage>('GET', `/api/operator/accounts?${query.toString()}`);
    },
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  });
  const items = results.data?.pages.flatMap((page) => page.items) ?? [];
  return (
    <>
      <PageHeader
        title="Accounts"
        description="Every account of the service: signed up here, created by the operator API or in bulk."
      />
      <Card>
        <label className="search">
          <span>Search by email, name or account id</span>
          <input
            type="search"
            maxLength={200}
            value={q}
            onChange={(e) => setQ(e.target.value)}
            placeholder="alice@example.com"
          />
        </label>
        {results.isPending ? (
          <Loading />
        ) : results.isError ? (
          <ErrorState error={results.error} retry={() => void results.refetch()} />
        ) : items.length === 0 ? (
          <Empty title={q ? 'No account matches.' : 'No accounts yet.'} />
        ) : (
          <>
            <table className="table table-stack" data-testid="operator-accounts">
              <thead>
                <tr>
                  <th scope="col">Account</th>
                  <th scope="col">Plan</th>
                  <th scope="col">Id</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {items.map((a) => (
                  <tr key={a.account_id}>
                    <td data-label="Account">
                      <Link to={`/operator/accounts/${a.account_id}`}>{a.email ?? a.name}</Link>
                      {a.email && a.email !== a.name && <span className="muted"> ({a.name})</span>}
                      {a.type === 'team' && <span className="muted"> · team</span>}
                    </td>
                    <td data-label="Plan">{planName(a.plan)}</td>
                    <td data-label="Id">
                      <code>{a.account_id}</code>
                    </td>
                    <td data-label="Created">{formatDateTime(a.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            {results.hasNextPage && (
              <button
                type="button"
                className="button button-secondary"
                disabled={results.isFetchingNextPage}
                onClick={() => void results.fetchNextPage()}
              >
                {results.isFetchingNextPage ? 'Loading…' : 'Show more accounts'}
              </button>
            )}
          </>
        )}
      </Card>
    </>
  );
}

import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router-dom';
import { api } from '../api';
import { Card, Empty, ErrorState, Loading, PageHeader } from '../components/ui';
import { formatDateTime } from '../format';

interface Found {
  account_id: string;
  email: string;
  created_at: string;
}

export function OperatorAccountsPage() {
  const [q, setQ] = useState('');
  const results = useQuery({
    queryKey: ['operator-accounts', q],
    queryFn: () =>
      api<{ items: Found[] }>('GET', `/api/operator/accounts?q=${encodeURIComponent(q)}`),
  });
  return (
    <>
      <PageHeader
        title="Accounts"
        description="Every account that signed up through the dashboard."
      />
      <Card>
        <label className="search">
          <span>Search by email or account id</span>
          <input
            type="search"
            value={q}
            onChange={(e) => setQ(e.target.value)}
            placeholder="alice@example.com"
          />
        </label>
        {results.isPending ? (
          <Loading />
        ) : results.isError ? (
          <ErrorState error={results.error} retry={() => void results.refetch()} />
        ) : results.data.items.length === 0 ? (
          <Empty title={q ? 'No account matches.' : 'No accounts yet.'} />
        ) : (
          <table className="table" data-testid="operator-accounts">
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Account</th>
                <th scope="col">Signed up</th>
              </tr>
            </thead>
            <tbody>
              {results.data.items.map((a) => (
                <tr key={a.account_id}>
                  <td>
                    <Link to={`/operator/accounts/${a.account_id}`}>{a.email}</Link>
                  </td>
                  <td>
                    <code>{a.account_id}</code>
                  </td>
                  <td>{formatDateTime(a.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Card>
    </>
  );
}

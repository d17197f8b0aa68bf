import { useInfiniteQuery, useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../api';
import { formatDateTime } from '../format';
import { keyHolderOf, revocationOutcomeOf, type OperatorKey } from '../operator-keys';
import { ConfirmDialog } from './confirm-dialog';
import { Empty, ErrorState, Loading, Notice } from './ui';

/**
 * The account's API keys on the operator's account page (billing's operator list through the
 * BFF): the dashboard's own key of a user labelled, each active one revoked after a confirmation.
 * How an operator finds and revokes a leaked key (ADR 0110). Active keys unless asked: each
 * renewal of a dashboard key leaves a revoked one.
 */
export function OperatorApiKeys(props: { accountId: string }) {
  const client = useQueryClient();
  const [withRevoked, setWithRevoked] = useState(false);
  const [doomed, setDoomed] = useState<OperatorKey | undefined>();
  const [revoked, setRevoked] = useState<OperatorKey | undefined>();
  const queryKey = ['operator-account-keys', props.accountId, withRevoked];
  const keys = useInfiniteQuery({
    queryKey,
    initialPageParam: '',
    queryFn: ({ pageParam }) => {
      const query = new URLSearchParams({ state: withRevoked ? 'all' : 'active' });
      if (pageParam) query.set('cursor', pageParam);
      return api<{ items: OperatorKey[]; next_cursor: string | null }>(
        'GET',
        `/api/operator/accounts/${props.accountId}/api-keys?${query.toString()}`,
      );
    },
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  });
  const revoke = useMutation({
    mutationFn: (key: OperatorKey) =>
      api('DELETE', `/api/operator/accounts/${props.accountId}/api-keys/${key.id}`),
    onSuccess: (_answer, key) => {
      setDoomed(undefined);
      setRevoked(key);
      void client.invalidateQueries({ queryKey: ['operator-account-keys', props.accountId] });
    },
    // Revoked meanwhile (409 already_revoked, its time said): the list shows it so.
    onError: () => {
      setDoomed(undefined);
      void client.invalidateQueries({ queryKey: ['operator-account-keys', props.accountId] });
    },
  });
  const items = keys.data?.pages.flatMap((page) => page.items) ?? [];
  return (
    <>
      <label className="check">
        <input
          type="checkbox"
          checked={withRevoked}
          onChange={(e) => setWithRevoked(e.target.checked)}
        />
        Show revoked keys too
      </label>
      {revoked && <Notice tone="ok">{revocationOutcomeOf(revoked, true)}</Notice>}
      {revoke.error && <Notice tone="bad">{revoke.error.message}</Notice>}
      {keys.isPending ? (
        <Loading />
      ) : keys.isError ? (
        <ErrorState error={keys.error} retry={() => void keys.refetch()} />
      ) : items.length === 0 ? (
        <Empty title={withRevoked ? 'No API keys.' : 'No active API keys.'} />
      ) : (
        <table className="table table-stack" data-testid="operator-api-keys">
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Name</th>
              <th scope="col">Held by</th>
              <th scope="col">Scopes</th>
              <th scope="col">Created</th>
              <th scope="col">
                <span className="visually-hidden">Status and actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {items.map((k) => (
              <tr key={k.id}>
                <td data-label="Key">
                  {/* An id is code: it may break to fit, a word may not (QA at 390 px). */}
                  <code>{k.hint}</code> <code className="muted">{k.id}</code>
                </td>
                <td data-label="Name">{k.name}</td>
                <td data-label="Held by" data-testid="key-holder">
                  {keyHolderOf(k)}
                </td>
                <td data-label="Scopes">{k.scopes.join(', ')}</td>
                <td data-label="Created">
                  <span className="nowrap">{formatDateTime(k.created_at)}</span>
                </td>
                <td className="num">
                  {k.revoked_at ? (
                    <span className="badge badge-neutral">
                      Revoked <span className="nowrap">{formatDateTime(k.revoked_at)}</span>
                    </span>
                  ) : (
                    <button
                      type="button"
                      className="button button-danger button-small"
                      onClick={() => {
                        setRevoked(undefined);
                        setDoomed(k);
                      }}
                    >
                      Revoke<span className="visually-hidden"> key {k.hint}</span>
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {keys.hasNextPage && (
        <button
          type="button"
          className="button button-secondary"
          disabled={keys.isFetchingNextPage}
          onClick={() => void keys.fetchNextPage()}
        >
          {keys.isFetchingNextPage ? 'Loading…' : 'Load older keys'}
        </button>
      )}
      <ConfirmDialog
        open={doomed !== undefined}
        title="Revoke this API key?"
        confirmLabel="Revoke key"
        danger
        busy={revoke.isPending}
        onCancel={() => setDoomed(undefined)}
        onConfirm={() => doomed && revoke.mutate(doomed)}
      >
        <p>{doomed && revocationOutcomeOf(doomed, false)}</p>
      </ConfirmDialog>
    </>
  );
}

import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../api';
import { formatDateTime } from '../format';
import type { ApiKey } from '../types';
import { ConfirmDialog } from './confirm-dialog';
import { Notice } from './ui';

/** A listed key and the user of the account who made it (null: made outside the dashboard). */
type ListedKey = ApiKey & { created_by_email?: string | null };

/**
 * The account's API keys as a table (hint, name, scopes when asked, who made it, created), each
 * deleted after a confirmation: the API keys page lists every key with its scopes, Address Audit
 * its own.
 */
export function ApiKeysTable(props: { keys: ListedKey[]; showScopes?: boolean; testId: string }) {
  const client = useQueryClient();
  const [doomed, setDoomed] = useState<ApiKey | undefined>();
  const remove = useMutation({
    mutationFn: (key: ApiKey) => api('DELETE', `/api/api-keys/${key.id}`),
    onSuccess: () => {
      setDoomed(undefined);
      void client.invalidateQueries({ queryKey: ['api-keys'] });
    },
  });
  return (
    <>
      <table className="table table-stack" data-testid={props.testId}>
        <thead>
          <tr>
            <th scope="col">Key</th>
            <th scope="col">Name</th>
            {props.showScopes && <th scope="col">Scopes</th>}
            <th scope="col">Made by</th>
            <th scope="col">Created</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {props.keys.map((k) => (
            <tr key={k.id}>
              <td data-label="Key">
                <code>{k.hint}</code>
              </td>
              <td data-label="Name">{k.name ?? '—'}</td>
              {props.showScopes && (
                <td data-label="Scopes" data-testid="key-scopes">
                  {k.scopes.join(', ')}
                </td>
              )}
              <td data-label="Made by" data-testid="key-made-by">
                {k.created_by_email ?? '—'}
              </td>
              <td data-label="Created">
                <span className="nowrap">{formatDateTime(k.created_at)}</span>
              </td>
              <td className="num">
                <button
                  type="button"
                  className="button button-danger button-small"
                  onClick={() => setDoomed(k)}
                >
                  Delete<span className="visually-hidden"> key {k.hint}</span>
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {remove.error && <Notice tone="bad">{remove.error.message}</Notice>}
      <ConfirmDialog
        open={doomed !== undefined}
        title="Delete this API key?"
        confirmLabel="Delete key"
        danger
        busy={remove.isPending}
        onCancel={() => setDoomed(undefined)}
        onConfirm={() => doomed && remove.mutate(doomed)}
      >
        <p>
          Requests with key <code>{doomed?.hint}</code> are refused from now on.
        </p>
      </ConfirmDialog>
    </>
  );
}

import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { announce } from '../announcer';
import { api, ApiError } from '../api';
import { formatDateTime } from '../format';
import type { ApiKey } from '../types';
import { ConfirmDialog } from './confirm-dialog';
import { focusSectionHeading } from './ui';

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
  const table = useRef<HTMLTableElement>(null);
  // Counts the deletes done: each, once the dialog has closed (it gives the focus back to the
  // Delete button, whose row is going), moves the focus to the list's heading.
  const [deleted, setDeleted] = useState(0);
  useEffect(() => {
    if (deleted > 0) focusSectionHeading(table.current);
  }, [deleted]);
  const gone = (words: string) => {
    setDoomed(undefined);
    setDeleted((n) => n + 1);
    announce(words);
    void client.invalidateQueries({ queryKey: ['api-keys'] });
  };
  const remove = useMutation({
    mutationFn: (key: ApiKey) => api('DELETE', `/api/api-keys/${key.id}`),
    onSuccess: (_, key) => gone(`Key ${key.hint} deleted.`),
    // Not found: the key is already gone (deleted in another tab or by a teammate), which is
    // what the user asked for, so the dialog closes, the list is refreshed and a status says so;
    // an error in a dialog whose key no longer exists would offer only a retry that cannot
    // work. Any other failure stays in the dialog (a modal hides the page from a screen
    // reader), where Delete key tries again and Cancel gives up.
    onError: (error) => {
      if (error instanceof ApiError && error.status === 404) gone('That key was already deleted.');
    },
  });
  const failure =
    remove.error && !(remove.error instanceof ApiError && remove.error.status === 404)
      ? remove.error.message
      : undefined;
  return (
    <>
      <table ref={table} className="table table-stack" data-testid={props.testId}>
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
                  onClick={() => {
                    remove.reset();
                    setDoomed(k);
                  }}
                >
                  Delete<span className="visually-hidden"> key {k.hint}</span>
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <ConfirmDialog
        open={doomed !== undefined}
        title="Delete this API key?"
        confirmLabel="Delete key"
        danger
        busy={remove.isPending}
        error={failure && `The key was not deleted: ${failure}`}
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

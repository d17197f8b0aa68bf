import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useRef, useState } from 'react';
import { api } from '../api';
import { API_SCOPES, curlExampleOf, offeredScopes, type ApiKeyScope } from '../api-keys';
import { ApiKeysTable } from '../components/api-keys-table';
import { CopyButton, SecretOnce } from '../components/copy-button';
import { Field, FieldSet } from '../components/field';
import {
  Card,
  Empty,
  ErrorState,
  focusSectionHeading,
  Loading,
  Notice,
  PageHeader,
} from '../components/ui';
import { placeErrors } from '../form-errors';
import type { ApiKey } from '../types';
import { useSubmission } from '../use-submission';
import { useSession } from '../session';
import { useNetworks } from './node-access';

/** The REST APIs' public bases, each with the scope a key needs and a one-line curl example. */
function RestApisCard() {
  const networks = useNetworks();
  return (
    <Card title="REST APIs">
      <p>
        Send an API key as a bearer token (<code>authorization: Bearer &lt;API key&gt;</code>). A
        key works only with the APIs its scopes name; another answers 403{' '}
        <code>insufficient_scope</code> (the address audit API: <code>audit_scope_required</code>).
        Changing the plan (<code>PUT /account/plan</code>) needs the Plan scope beside Account,
        which only an owner gives a key.
      </p>
      {networks.isPending ? (
        <Loading />
      ) : networks.isError ? (
        <ErrorState error={networks.error} retry={() => void networks.refetch()} />
      ) : (
        <ul className="plain-list rest-apis" data-testid="rest-apis">
          {API_SCOPES.map((scope) => {
            const base = networks.data[`${scope.id}_url`];
            return (
              <li key={scope.id}>
                <h3 className="rest-api-title">
                  {scope.label} API <span className="muted">(scope {scope.id})</span>
                </h3>
                <span className="copy-inline">
                  <code className="url" data-testid={`base-url-${scope.id}`}>
                    {base}
                  </code>
                  <CopyButton value={base} label={`Copy the ${scope.label} API base URL`} />
                </span>
                <pre
                  className="code-block"
                  tabIndex={0}
                  role="region"
                  aria-label={`Example: ${scope.label} API`}
                >
                  {curlExampleOf(scope.id, base)}
                </pre>
              </li>
            );
          })}
        </ul>
      )}
    </Card>
  );
}

/** A customer's API keys: made with the scopes they choose, shown once, listed, deleted. */
export function ApiKeysPage() {
  const client = useQueryClient();
  const offered = offeredScopes(useSession().session.user?.account_role);
  const keys = useQuery({
    queryKey: ['api-keys'],
    queryFn: () => api<{ items: ApiKey[] }>('GET', '/api/api-keys'),
  });
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<ApiKeyScope[]>(['webhooks']);
  const [fresh, setFresh] = useState<ApiKey | undefined>();
  // Where the focus goes once the new key's secret is dismissed: the list's heading.
  const list = useRef<HTMLDivElement>(null);
  // No Idempotency-Key on this route: useSubmission's one request at a time is what keeps a
  // double click from making two keys.
  const create = useSubmission({
    values: { ...(name.trim() ? { name: name.trim() } : {}), scopes },
    send: (body) => api<ApiKey>('POST', '/api/api-keys', body),
    onSuccess: (key) => {
      setFresh(key);
      setName('');
      void client.invalidateQueries({ queryKey: ['api-keys'] });
    },
  });
  const errors = placeErrors(create.error, { name: ['name'], scopes: ['scopes'] });
  const scopesError = scopes.length === 0 ? 'Choose at least one scope.' : undefined;
  return (
    <>
      <PageHeader
        title="API keys"
        description="Keys for the REST APIs: webhooks, your account, Address Audit."
      />
      <Card title="Create an API key">
        <form onSubmit={create.submit} className="form" noValidate>
          {errors.notice && <Notice tone="bad">{errors.notice}</Notice>}
          <Field
            label="Key name"
            hint="Optional; helps you tell keys apart."
            error={errors.fields.name}
          >
            <input value={name} maxLength={100} onChange={(e) => setName(e.target.value)} />
          </Field>
          <FieldSet
            legend="Scopes: what the key may call"
            error={scopesError ?? errors.fields.scopes}
            testId="api-key-scopes"
          >
            {offered.map((scope) => (
              <label key={scope.id} className="check">
                <input
                  type="checkbox"
                  checked={scopes.includes(scope.id)}
                  onChange={(e) =>
                    setScopes(
                      e.target.checked
                        ? offered
                            .map((s) => s.id)
                            .filter((id) => id === scope.id || scopes.includes(id))
                        : scopes.filter((s) => s !== scope.id),
                    )
                  }
                />
                {scope.label}: {scope.description}
              </label>
            ))}
          </FieldSet>
          <div className="actions">
            <button
              type="submit"
              className="button"
              disabled={create.pending || scopes.length === 0}
            >
              Create API key
            </button>
          </div>
        </form>
        {fresh?.key && (
          <SecretOnce
            label="API key"
            value={fresh.key}
            takeFocus
            onDone={() => {
              setFresh(undefined);
              focusSectionHeading(list.current);
            }}
          />
        )}
      </Card>
      <Card title="Your API keys">
        <div ref={list}>
          {keys.isPending ? (
            <Loading />
          ) : keys.isError ? (
            <ErrorState error={keys.error} retry={() => void keys.refetch()} />
          ) : keys.data.items.length === 0 ? (
            <Empty title="No API keys yet." />
          ) : (
            <ApiKeysTable keys={keys.data.items} showScopes testId="all-api-keys" />
          )}
        </div>
      </Card>
      <RestApisCard />
    </>
  );
}

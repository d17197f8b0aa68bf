import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, ApiError, relay } from '../api';
import { accessTokensOverCap, planChangeRoute } from '../cap-errors';
import { ExhaustedNotice } from '../components/exhausted-notice';
import { ConfirmDialog } from '../components/confirm-dialog';
import { CopyButton, SecretOnce } from '../components/copy-button';
import { Field } from '../components/field';
import { Card, Empty, ErrorState, Loading, Notice, PageHeader, UsageBar } from '../components/ui';
import { formatDateTime } from '../format';
import { placeErrors } from '../form-errors';
import type { AccessToken, NetworkEndpoints, Page } from '../types';
import { useSubmission } from '../use-submission';
import { useSession } from '../session';
import { useAccount } from './overview';

const REGION_NAMES: Record<string, string> = {
  eu: 'Frankfurt (eu)',
  us: 'New York (us)',
  asia: 'Singapore (asia)',
  shared: 'Shared endpoint',
};
const INTERFACE_NAMES: Record<string, string> = {
  jsonrpc: 'JSON-RPC',
  websocket: 'WebSocket',
  grpc: 'gRPC',
};

export function useNetworks() {
  return useQuery({
    queryKey: ['networks'],
    queryFn: () =>
      api<{
        items: NetworkEndpoints[];
        account_url: string;
        webhooks_url: string;
        audit_url: string;
      }>('GET', '/api/networks'),
    staleTime: Infinity,
  });
}

/** The URL a client uses: the token is the last path segment (gRPC: metadata `x-access-token`). */
function urlWith(
  endpoint: { interface: string; url: string },
  token: string | undefined,
  hint: string,
) {
  if (endpoint.interface === 'grpc') return endpoint.url;
  return `${endpoint.url}${token ?? `<token ${hint}>`}/`;
}

function EndpointTable(props: { network?: NetworkEndpoints; token?: string; hint: string }) {
  if (!props.network) return null;
  return (
    <>
      {props.token === undefined && (
        <p className="muted" data-testid="token-hidden-note">
          The token is shown only when it is created or rolled, so these URLs end with its hint and
          cannot be copied: paste your saved token in its place, or roll the token for a new one.
        </p>
      )}
      <table className="table table-compact table-stack" data-testid="endpoint-table">
        <caption className="visually-hidden">Endpoints of {props.network.display_name}</caption>
        <thead>
          <tr>
            <th scope="col">Region</th>
            <th scope="col">Interface</th>
            <th scope="col">URL</th>
            <th scope="col">
              <span className="visually-hidden">Copy</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {props.network.endpoints.map((e) => {
            const url = urlWith(e, props.token, props.hint);
            return (
              <tr key={`${e.endpoint}-${e.interface}`}>
                <td data-label="Region">{REGION_NAMES[e.endpoint] ?? e.endpoint}</td>
                <td data-label="Interface">
                  {INTERFACE_NAMES[e.interface] ?? e.interface}
                  {e.interface === 'grpc' && (
                    <span className="muted"> (token in x-access-token)</span>
                  )}
                </td>
                <td data-label="URL">
                  <code className="url">{url}</code>
                </td>
                <td>
                  {/* Only a URL that works: a listed token shows its hint, not the token. */}
                  {(props.token !== undefined || e.interface === 'grpc') && (
                    <CopyButton
                      value={url}
                      label={`Copy ${INTERFACE_NAMES[e.interface]} URL for ${REGION_NAMES[e.endpoint]}`}
                    />
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {props.network.deprecated_methods.length > 0 && (
        <p className="muted" data-testid="deprecated-methods">
          Deprecated, still served (removal date not announced):{' '}
          {props.network.deprecated_methods.map((m, i) => (
            <span key={m}>
              {i > 0 && ', '}
              <code>{m}</code>
            </span>
          ))}
          .
        </p>
      )}
    </>
  );
}

export function NodeAccessPage() {
  const client = useQueryClient();
  const account = useAccount();
  const { session } = useSession();
  const networks = useNetworks();
  const tokens = useQuery({
    queryKey: ['access-tokens'],
    queryFn: () => api<Page<AccessToken>>('GET', relay('billing', '/access-tokens?limit=200')),
  });
  const [network, setNetwork] = useState('polygon-mainnet');
  const [name, setName] = useState('');
  const [fresh, setFresh] = useState<AccessToken | undefined>();
  const [confirm, setConfirm] = useState<
    { kind: 'roll' | 'delete'; token: AccessToken } | undefined
  >();
  const refresh = () => client.invalidateQueries({ queryKey: ['access-tokens'] });

  // No Idempotency-Key on this route: useSubmission's one request at a time is what keeps a
  // double click from making two tokens.
  const create = useSubmission({
    values: { network, name: name.trim() || undefined },
    send: (body) => api<AccessToken>('POST', relay('billing', '/access-tokens'), body),
    onSuccess: (token) => {
      setFresh(token);
      setName('');
      void refresh();
    },
  });
  const act = useMutation({
    mutationFn: async (what: { kind: 'roll' | 'delete'; token: AccessToken }) =>
      what.kind === 'roll'
        ? api<AccessToken>('POST', relay('billing', `/access-tokens/${what.token.id}/roll`))
        : api<null>('DELETE', relay('billing', `/access-tokens/${what.token.id}`)),
    onSuccess: (result) => {
      setConfirm(undefined);
      setFresh(result ?? undefined);
      void refresh();
    },
  });

  if (tokens.isPending || networks.isPending) return <Loading />;
  if (tokens.isError)
    return <ErrorState error={tokens.error} retry={() => void tokens.refetch()} />;
  if (networks.isError) return <ErrorState error={networks.error} />;
  const byKey = new Map(networks.data.items.map((n) => [n.key, n]));
  const cap = account.data?.caps.access_tokens;
  const route = account.data
    ? planChangeRoute(account.data.self_service_billing, session.user?.account_role)
    : undefined;
  const overCap =
    cap === undefined ? null : accessTokensOverCap(tokens.data.items.length, cap, route);
  const createErrors = placeErrors(create.error, { network: ['network'], name: ['name'] });
  const capped =
    create.error instanceof ApiError && create.error.code === 'cap_access_tokens_exceeded';
  return (
    <>
      <PageHeader
        title="Node access"
        description="Access tokens: put one at the end of its network's endpoint URL. A network may have several; your plan sets how many tokens you hold in all."
      />
      <ExhaustedNotice />
      {cap !== undefined && (
        <Card>
          <UsageBar
            label="Access tokens on your plan"
            used={tokens.data.items.length}
            limit={cap}
          />
          {overCap && <p data-testid="access-tokens-over-cap">{overCap}</p>}
        </Card>
      )}
      {fresh?.token && (
        <Card title="Your new access token">
          <SecretOnce label="Access token" value={fresh.token} onDone={() => setFresh(undefined)} />
          <EndpointTable network={byKey.get(fresh.network)} token={fresh.token} hint={fresh.hint} />
        </Card>
      )}
      <Card title="Create an access token">
        <form className="form-row" onSubmit={create.submit}>
          <Field label="Network" error={createErrors.fields.network}>
            <select value={network} onChange={(e) => setNetwork(e.target.value)}>
              {networks.data.items.map((n) => (
                <option key={n.key} value={n.key}>
                  {n.display_name}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Name (optional)" error={createErrors.fields.name}>
            <input value={name} maxLength={100} onChange={(e) => setName(e.target.value)} />
          </Field>
          <button type="submit" className="button" disabled={create.pending}>
            Create token
          </button>
        </form>
        {createErrors.notice && (
          <Notice tone="bad">
            {capped
              ? (overCap ??
                `Your plan allows ${cap ?? 'no more'} access tokens. Delete one or upgrade your plan.`)
              : createErrors.notice}
          </Notice>
        )}
      </Card>
      <Card title="Your access tokens">
        {tokens.data.items.length === 0 ? (
          <Empty title="No access tokens yet.">
            Create one above to send your first JSON-RPC call.
          </Empty>
        ) : (
          <ul className="token-list">
            {tokens.data.items.map((t) => (
              <li key={t.id} className="token-item" data-testid="access-token">
                <div className="token-head">
                  <div>
                    <strong>{byKey.get(t.network)?.display_name ?? t.network}</strong>{' '}
                    <span className="muted">
                      {t.name && (
                        <>
                          <span className="long-name" data-testid="token-name">
                            {t.name}
                          </span>
                          {' · '}
                        </>
                      )}
                      {/* A hint and a date never break inside (QA: "6455…" / "171f"). */}
                      <span className="nowrap">{t.hint}</span> · created{' '}
                      <span className="nowrap">{formatDateTime(t.created_at)}</span>
                    </span>
                  </div>
                  <div className="actions">
                    <button
                      type="button"
                      className="button button-secondary button-small"
                      onClick={() => setConfirm({ kind: 'roll', token: t })}
                    >
                      Roll
                    </button>
                    <button
                      type="button"
                      className="button button-danger button-small"
                      onClick={() => setConfirm({ kind: 'delete', token: t })}
                    >
                      Delete
                    </button>
                  </div>
                </div>
                <details>
                  <summary>Endpoints</summary>
                  <EndpointTable network={byKey.get(t.network)} hint={t.hint} />
                </details>
              </li>
            ))}
          </ul>
        )}
      </Card>
      <ConfirmDialog
        open={confirm !== undefined}
        title={confirm?.kind === 'roll' ? 'Roll this access token?' : 'Delete this access token?'}
        confirmLabel={confirm?.kind === 'roll' ? 'Roll token' : 'Delete token'}
        danger
        busy={act.isPending}
        onCancel={() => setConfirm(undefined)}
        onConfirm={() => confirm && act.mutate(confirm)}
      >
        {confirm?.kind === 'roll' ? (
          <p>
            A new token replaces <code>{confirm.token.hint}</code>.{' '}
            <strong>The old token stops working at once</strong>: every client using it gets 401
            until you give it the new one.
          </p>
        ) : (
          <p>
            Token <code>{confirm?.token.hint}</code> stops working at once and cannot be restored.
          </p>
        )}
        {act.error && <Notice tone="bad">{act.error.message}</Notice>}
      </ConfirmDialog>
    </>
  );
}

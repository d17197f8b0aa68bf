import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type KeyboardEvent } from 'react';
import { Link, useSearchParams } from 'react-router-dom';
import { api, relay } from '../api';
import { ApiKeysTable } from '../components/api-keys-table';
import { SecretOnce } from '../components/copy-button';
import { Card, Empty, ErrorState, Loading, Notice, PageHeader, UsageBar } from '../components/ui';
import { formatDateTime, formatRelative } from '../format';
import type { ApiKey } from '../types';
import { useSubmission } from '../use-submission';
import { useNetworks } from './node-access';

interface Quota {
  limit: number;
  used: number;
  resets_at: string;
}

const TABS = [
  { id: 'overview', label: 'Overview' },
  { id: 'api-key', label: 'API key' },
] as const;
type Tab = (typeof TABS)[number]['id'];

function QuotaCard() {
  const quota = useQuery({
    queryKey: ['audit-quota'],
    queryFn: () => api<Quota>('GET', relay('audit', '/quota')),
  });
  return (
    <Card title="Today's audit checks">
      {quota.isPending ? (
        <Loading />
      ) : quota.isError ? (
        <ErrorState error={quota.error} retry={() => void quota.refetch()} />
      ) : (
        <>
          <UsageBar label="Checks used today" used={quota.data.used} limit={quota.data.limit} />
          <p className="muted">
            Resets {formatDateTime(quota.data.resets_at)} ({formatRelative(quota.data.resets_at)}).
          </p>
        </>
      )}
    </Card>
  );
}

function ApiKeyTab() {
  const client = useQueryClient();
  const keys = useQuery({
    queryKey: ['api-keys'],
    queryFn: () => api<{ items: ApiKey[] }>('GET', '/api/api-keys'),
  });
  const [fresh, setFresh] = useState<ApiKey | undefined>();
  // One key per press: a double click sends one request (useSubmission).
  const generate = useSubmission({
    values: { name: 'Address Audit', scopes: ['audit'] },
    send: (body) => api<ApiKey>('POST', '/api/api-keys', body),
    onSuccess: (key) => {
      setFresh(key);
      void client.invalidateQueries({ queryKey: ['api-keys'] });
    },
  });
  const auditKeys = keys.data?.items.filter((k) => k.scopes.includes('audit')) ?? [];
  return (
    <Card
      title="API keys"
      actions={
        <button
          type="button"
          className="icon-button"
          aria-label="Generate API key"
          title="Generate API key"
          disabled={generate.pending}
          onClick={() => generate.submit()}
        >
          <svg viewBox="0 0 24 24" width="20" height="20" aria-hidden="true">
            <path
              d="M12 5v14M5 12h14"
              stroke="currentColor"
              strokeWidth="2.2"
              strokeLinecap="round"
            />
          </svg>
        </button>
      }
    >
      {generate.error && <Notice tone="bad">{generate.error.message}</Notice>}
      {fresh?.key && (
        <SecretOnce label="API key" value={fresh.key} onDone={() => setFresh(undefined)} />
      )}
      {keys.isPending ? (
        <Loading />
      ) : keys.isError ? (
        <ErrorState error={keys.error} retry={() => void keys.refetch()} />
      ) : auditKeys.length === 0 ? (
        <Empty title="No API key yet.">Press the plus icon to generate one.</Empty>
      ) : (
        <ApiKeysTable keys={auditKeys} testId="api-keys" />
      )}
      <p className="muted">
        Keys made here are for Address Audit only. For the webhooks or account APIs, choose the
        scopes on <Link to="/api-keys">API keys</Link>.
      </p>
    </Card>
  );
}

export function AddressAuditPage() {
  // The tab is kept in the URL (`?tab=api-key`): a reload or a shared link opens it again.
  const [params, setParams] = useSearchParams();
  const tab: Tab = TABS.find((t) => t.id === params.get('tab'))?.id ?? 'overview';
  const setTab = (next: Tab) =>
    setParams(next === 'overview' ? {} : { tab: next }, { replace: true });
  const networks = useNetworks();
  const onKey = (event: KeyboardEvent) => {
    if (event.key !== 'ArrowRight' && event.key !== 'ArrowLeft') return;
    const index = TABS.findIndex((t) => t.id === tab);
    const next = TABS[(index + (event.key === 'ArrowRight' ? 1 : TABS.length - 1)) % TABS.length]!;
    setTab(next.id);
    document.getElementById(`tab-${next.id}`)?.focus();
  };
  return (
    <>
      <PageHeader
        title="Address Audit"
        description="Risk checks of wallets and token contracts, with your own API key."
      />
      <div role="tablist" aria-label="Address Audit" className="tabs" onKeyDown={onKey}>
        {TABS.map((t) => (
          <button
            key={t.id}
            id={`tab-${t.id}`}
            type="button"
            role="tab"
            aria-selected={tab === t.id}
            aria-controls={`panel-${t.id}`}
            tabIndex={tab === t.id ? 0 : -1}
            className={`tab ${tab === t.id ? 'tab-active' : ''}`}
            onClick={() => setTab(t.id)}
          >
            {t.label}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`}>
        {tab === 'overview' ? (
          <>
            <QuotaCard />
            <Card title="Run a check">
              <p>Send your API key as a bearer token:</p>
              {/* Focusable: on a narrow screen the command scrolls inside its block. */}
              <pre className="code-block" tabIndex={0} role="region" aria-label="Example check">
                {`curl -X POST ${networks.data?.audit_url ?? '<audit url>'}/wallet-audit/check \\
  -H "authorization: Bearer <API key>" -H 'content-type: application/json' \\
  -d '{"network":"ETH","address":"0x000000000000000000000000000000000000dEaD"}'`}
              </pre>
            </Card>
          </>
        ) : (
          <ApiKeyTab />
        )}
      </div>
    </>
  );
}

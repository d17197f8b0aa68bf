import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router-dom';
import { api, relay } from '../api';
import { webhookSlotsSummary } from '../cap-errors';
import { ExhaustedNotice } from '../components/exhausted-notice';
import { Card, Empty, ErrorState, Loading, PageHeader, UsageBar } from '../components/ui';
import { StatusBadge } from '../components/status-badge';
import { formatDateTime, formatNumber, networkLabel } from '../format';
import { useNetworks } from './node-access';
import { CopyButton } from '../components/copy-button';
import type { AddressList, Page, Webhook } from '../types';

export interface WebhookLimits {
  tier: string;
  account_type: string;
  plan_required: boolean;
  caps: Record<string, number>;
  usage: Record<string, number>;
  /** Networks this deployment watches for webhooks (the indexer's NETWORKS). */
  networks: string[];
}

export function useWebhookLimits() {
  return useQuery({
    queryKey: ['webhook-limits'],
    queryFn: () => api<WebhookLimits>('GET', relay('webhooks', '/webhooks/limits')),
  });
}

export function useWebhooks() {
  return useQuery({
    queryKey: ['webhooks'],
    queryFn: () => api<Page<Webhook>>('GET', relay('webhooks', '/webhooks?limit=200')),
  });
}

export function useAddressLists() {
  return useQuery({
    queryKey: ['address-lists'],
    queryFn: () => api<Page<AddressList>>('GET', relay('webhooks', '/address-lists?limit=200')),
  });
}

/** The plan's webhook caps against what the account uses now (paused webhooks count: spec rule 1). */
export function WebhookLimitsCard(props: { webhooks?: Webhook[]; lists?: AddressList[] }) {
  const limits = useWebhookLimits();
  if (limits.isPending) return <Loading />;
  if (limits.isError)
    return <ErrorState error={limits.error} retry={() => void limits.refetch()} />;
  const { caps, usage } = limits.data;
  const active = (props.webhooks ?? []).filter((w) => w.status === 'active').length;
  return (
    <Card title="Plan limits">
      {limits.data.plan_required ? (
        <p>Your account needs a plan before it can create webhooks.</p>
      ) : (
        <div className="grid grid-3">
          <UsageBar
            label="Webhooks, paused ones included"
            used={usage['active_webhooks'] ?? active}
            limit={caps['active_webhooks'] ?? 0}
            summary={webhookSlotsSummary(
              usage['active_webhooks'] ?? active,
              caps['active_webhooks'] ?? 0,
            )}
          />
          <UsageBar
            label="Watched addresses (account)"
            used={usage['account_addresses'] ?? 0}
            limit={caps['addresses_per_account'] ?? 0}
          />
          <UsageBar
            label="Address lists"
            used={usage['address_lists'] ?? props.lists?.length ?? 0}
            limit={caps['address_lists'] ?? 0}
          />
        </div>
      )}
      <p className="muted">
        Events per second: {formatNumber(caps['events_per_second'])} (bursts up to{' '}
        {formatNumber(caps['events_burst'])}); up to {formatNumber(caps['addresses_per_webhook'])}{' '}
        addresses per webhook.
      </p>
    </Card>
  );
}

/** Where the webhooks REST API is, and the key it needs (an audit key is refused there). */
function WebhooksApiCard() {
  const networks = useNetworks();
  const base = networks.data?.webhooks_url;
  return (
    <Card title="Webhooks REST API">
      <p>
        <span className="copy-inline rest-api-base">
          <code className="url" data-testid="webhooks-api-url">
            {base ?? '…'}
          </code>
          {base && <CopyButton value={base} label="Copy the Webhooks API base URL" />}
        </span>
      </p>
      <p className="muted">
        Call it with an API key that has the webhooks scope: make one on{' '}
        <Link to="/api-keys">API keys</Link>. An Address Audit key is refused there (403
        insufficient_scope).
      </p>
    </Card>
  );
}

export function WebhooksPage() {
  const webhooks = useWebhooks();
  const lists = useAddressLists();
  return (
    <>
      <PageHeader
        title="Webhooks"
        description="Get an HTTPS POST when a watched address moves."
        actions={
          <Link className="button" to="/webhooks/new">
            Create webhook
          </Link>
        }
      />
      <ExhaustedNotice />
      <WebhookLimitsCard webhooks={webhooks.data?.items} lists={lists.data?.items} />
      <WebhooksApiCard />
      <Card title="Your webhooks">
        {webhooks.isPending ? (
          <Loading />
        ) : webhooks.isError ? (
          <ErrorState error={webhooks.error} retry={() => void webhooks.refetch()} />
        ) : webhooks.data.items.length === 0 ? (
          <Empty title="No webhooks yet.">
            <Link to="/webhooks/new">Create one</Link> to watch addresses on a network.
          </Empty>
        ) : (
          <table className="table table-stack" data-testid="webhooks">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
                <th scope="col">Network</th>
                <th scope="col">Trigger</th>
                <th scope="col">Target</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {webhooks.data.items.map((w) => (
                <tr key={w.id}>
                  <td data-label="Name">
                    <Link to={`/webhooks/${w.id}`}>{w.name || w.id}</Link>
                  </td>
                  <td data-label="Status">
                    <StatusBadge webhook={w} />
                  </td>
                  <td data-label="Network">{networkLabel(w.network)}</td>
                  <td data-label="Trigger">{w.trigger_type.replace(/_/g, ' ')}</td>
                  {/* Cut with an ellipsis in the table (the full URL on hover and on the
                      webhook's page); written out whole, wrapped, in the phone layout. */}
                  <td data-label="Target" className="truncate target-cell" title={w.target_url}>
                    <code>{w.target_url}</code>
                  </td>
                  <td data-label="Created">{formatDateTime(w.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Card>
    </>
  );
}

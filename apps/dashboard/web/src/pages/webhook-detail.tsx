import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router-dom';
import { api, ApiError, relay } from '../api';
import { ConfirmDialog } from '../components/confirm-dialog';
import { SecretOnce } from '../components/copy-button';
import { StatusBadge } from '../components/status-badge';
import { Card, Empty, ErrorState, Loading, Notice, PageHeader } from '../components/ui';
import { formatDateTime, formatNumber } from '../format';
import type { DeliveryAttempt, DeliveryStats, Page, Webhook } from '../types';
import { txHashesOf } from './webhook-form';

function ActionError(props: { error: unknown }) {
  if (!(props.error instanceof ApiError)) return null;
  if (props.error.code === 'insufficient_balance')
    return (
      <Notice tone="bad">
        Your CU balance is zero, so this webhook cannot resume: deliveries cost 25 CU each.{' '}
        <Link to="/top-up">Top up</Link> and resume it again; a top-up that is still clearing is
        enough.
      </Notice>
    );
  if (props.error.code.startsWith('cap_'))
    return (
      <Notice tone="bad">
        {props.error.message} Pause or delete another webhook, or{' '}
        <Link to="/">upgrade your plan</Link>.
      </Notice>
    );
  return <Notice tone="bad">{props.error.message}</Notice>;
}

export function WebhookDetailPage() {
  const { id } = useParams();
  const navigate = useNavigate();
  const client = useQueryClient();
  const webhook = useQuery({
    queryKey: ['webhook', id],
    queryFn: () => api<Webhook>('GET', relay('webhooks', `/webhooks/${id}`)),
  });
  const stats = useQuery({
    queryKey: ['webhook-stats', id],
    queryFn: () => api<DeliveryStats>('GET', relay('webhooks', `/webhooks/${id}/stats`)),
  });
  const deliveries = useQuery({
    queryKey: ['webhook-deliveries', id],
    queryFn: () =>
      api<Page<DeliveryAttempt>>('GET', relay('webhooks', `/webhooks/${id}/deliveries`)),
  });
  const [secret, setSecret] = useState<string | undefined>();
  const [confirm, setConfirm] = useState<'delete' | 'rotate' | undefined>();
  const [info, setInfo] = useState<string | undefined>();
  const refresh = () => {
    void client.invalidateQueries({ queryKey: ['webhook', id] });
    void client.invalidateQueries({ queryKey: ['webhooks'] });
    void client.invalidateQueries({ queryKey: ['webhook-limits'] });
  };
  const action = useMutation({
    mutationFn: async (kind: 'pause' | 'resume' | 'test' | 'rotate' | 'delete') => {
      if (kind === 'delete') return api('DELETE', relay('webhooks', `/webhooks/${id}`));
      if (kind === 'rotate')
        return api<{ secret?: string }>(
          'POST',
          relay('webhooks', `/webhooks/${id}/secret/rotate`),
          {},
        );
      return api(
        'POST',
        relay('webhooks', `/webhooks/${id}/${kind}`),
        kind === 'test' ? {} : undefined,
      );
    },
    onSuccess: (result, kind) => {
      setConfirm(undefined);
      setInfo(undefined);
      if (kind === 'delete') {
        refresh();
        navigate('/webhooks');
        return;
      }
      if (kind === 'rotate') setSecret((result as { secret?: string } | null)?.secret);
      if (kind === 'test') setInfo('Test delivery queued; it is free and arrives within seconds.');
      refresh();
    },
  });
  if (webhook.isPending) return <Loading />;
  if (webhook.isError)
    return <ErrorState error={webhook.error} retry={() => void webhook.refetch()} />;
  const w = webhook.data;
  const txHashes = txHashesOf(w.filters);
  const paused = w.status !== 'active';
  return (
    <>
      <PageHeader
        title={w.name || w.id}
        description={`${w.network} · ${w.trigger_type.replace(/_/g, ' ')}`}
        actions={
          <>
            <StatusBadge webhook={w} />
            <Link className="button button-secondary" to={`/webhooks/${w.id}/edit`}>
              Edit
            </Link>
          </>
        }
      />
      <Card title="Actions">
        <div className="actions">
          {paused ? (
            <button
              type="button"
              className="button"
              disabled={action.isPending}
              onClick={() => action.mutate('resume')}
            >
              Resume
            </button>
          ) : (
            <button
              type="button"
              className="button button-secondary"
              disabled={action.isPending}
              onClick={() => action.mutate('pause')}
            >
              Pause
            </button>
          )}
          <button
            type="button"
            className="button button-secondary"
            disabled={action.isPending || paused}
            onClick={() => action.mutate('test')}
          >
            Send test delivery
          </button>
          <button
            type="button"
            className="button button-secondary"
            onClick={() => setConfirm('rotate')}
          >
            Rotate secret
          </button>
          <button
            type="button"
            className="button button-danger"
            onClick={() => setConfirm('delete')}
          >
            Delete
          </button>
        </div>
        {action.error && <ActionError error={action.error} />}
        {info && <Notice tone="ok">{info}</Notice>}
        {secret && (
          <SecretOnce
            label="New signing secret"
            value={secret}
            onDone={() => setSecret(undefined)}
          />
        )}
      </Card>
      <div className="grid grid-2">
        <Card title="Settings">
          <dl className="facts">
            <dt>Target URL</dt>
            <dd>
              <code>{w.target_url}</code>
            </dd>
            <dt>Phases</dt>
            <dd>{w.phases.join(', ')}</dd>
            <dt>Confirmation depth</dt>
            <dd>{w.confirm_depth} blocks</dd>
            {w.trigger_type === 'tx_confirmation' && (
              <>
                <dt>Transaction hashes</dt>
                <dd data-testid="tx-hashes">
                  {txHashes
                    ? `${formatNumber(txHashes.length)} watched`
                    : 'in the filter set through the API'}
                </dd>
              </>
            )}
            <dt>Addresses</dt>
            <dd>{formatNumber(w.addresses?.length ?? 0)} inline</dd>
            <dt>Address lists</dt>
            <dd>{w.list_refs?.length ? w.list_refs.join(', ') : 'none'}</dd>
            <dt>Created</dt>
            <dd>{formatDateTime(w.created_at)}</dd>
          </dl>
        </Card>
        <Card title="Delivery stats">
          {stats.isPending ? (
            <Loading />
          ) : stats.isError ? (
            <ErrorState error={stats.error} />
          ) : (
            <dl className="facts">
              <dt>Delivered</dt>
              <dd>{formatNumber(stats.data.delivered_total)}</dd>
              <dt>Failed</dt>
              <dd>{formatNumber(stats.data.failed_total)}</dd>
              <dt>Dropped by the rate limit</dt>
              <dd>{formatNumber(stats.data.rate_limited_total)}</dd>
              <dt>Last delivered</dt>
              <dd>{formatDateTime(stats.data.last_delivered_at)}</dd>
            </dl>
          )}
        </Card>
      </div>
      <Card title="Failed deliveries">
        {deliveries.isPending ? (
          <Loading />
        ) : deliveries.isError ? (
          <ErrorState error={deliveries.error} />
        ) : deliveries.data.items.length === 0 ? (
          <Empty title="No failed deliveries." />
        ) : (
          <table className="table" data-testid="failed-deliveries">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Event</th>
                <th scope="col">Attempt</th>
                <th scope="col">Outcome</th>
                <th scope="col">Answer</th>
              </tr>
            </thead>
            <tbody>
              {deliveries.data.items.map((d) => (
                <tr key={`${d.event_id}/${d.phase}/${d.attempt}/${d.at}`}>
                  <td data-testid="delivery-at">{formatDateTime(d.at)}</td>
                  <td>
                    <code>{d.event_id}</code>
                    {d.test && <span className="muted"> (test)</span>}
                  </td>
                  <td>
                    {d.attempt}
                    {d.final && <span className="muted"> (gave up)</span>}
                  </td>
                  <td data-testid="delivery-outcome">
                    {d.outcome.replace(/_/g, ' ')}
                    {d.error_class && <span className="muted"> · {d.error_class}</span>}
                  </td>
                  <td data-testid="delivery-answer">
                    {d.status_code !== null ? `HTTP ${d.status_code}` : (d.error ?? '—')}
                    {d.duration_ms !== null && (
                      <span className="muted"> in {formatNumber(d.duration_ms)} ms</span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Card>
      <ConfirmDialog
        open={confirm !== undefined}
        title={confirm === 'delete' ? 'Delete this webhook?' : 'Rotate the signing secret?'}
        confirmLabel={confirm === 'delete' ? 'Delete webhook' : 'Rotate secret'}
        danger={confirm === 'delete'}
        busy={action.isPending}
        onCancel={() => setConfirm(undefined)}
        onConfirm={() => confirm && action.mutate(confirm)}
      >
        {confirm === 'delete' ? (
          <p>Deliveries stop and its slot is freed. This cannot be undone.</p>
        ) : (
          <p>
            A new secret signs from now on; the old one keeps signing alongside it for 24 hours.
          </p>
        )}
      </ConfirmDialog>
    </>
  );
}

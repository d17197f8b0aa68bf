import { useInfiniteQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../api';
import { formatDateTime, networkLabel } from '../format';
import { pausedReasonWords, triggerWords, type OperatorWebhook } from '../operator-webhooks';
import { DeliveryLogCard } from './delivery-log-card';
import { StatusBadge } from './status-badge';
import { Card, Empty, ErrorState, Loading } from './ui';

/**
 * The account's webhooks on the operator's account page, read-only (support's "my webhook didn't
 * fire"): webhook-matcher's operator read through the BFF, and per webhook its delivery log, the
 * customer's own log component without Replay. No pause, resume, replay or delete here.
 */
export function OperatorWebhooks(props: { accountId: string }) {
  const [open, setOpen] = useState<OperatorWebhook | undefined>();
  const webhooks = useInfiniteQuery({
    queryKey: ['operator-account-webhooks', props.accountId],
    initialPageParam: '',
    queryFn: ({ pageParam }) =>
      api<{ items: OperatorWebhook[]; next_cursor: string | null }>(
        'GET',
        `/api/operator/accounts/${props.accountId}/webhooks${
          pageParam ? `?cursor=${encodeURIComponent(pageParam)}` : ''
        }`,
      ),
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  });
  const items = webhooks.data?.pages.flatMap((page) => page.items) ?? [];
  return (
    <>
      <Card title="Webhooks">
        <p className="muted">
          Read-only: pause, resume, replay and delete are the customer&apos;s (their webhook page or
          the API).
        </p>
        {webhooks.isPending ? (
          <Loading />
        ) : webhooks.isError ? (
          <ErrorState error={webhooks.error} retry={() => void webhooks.refetch()} />
        ) : items.length === 0 ? (
          <Empty title="No webhooks." />
        ) : (
          <>
            <table className="table table-stack" data-testid="operator-webhooks">
              <thead>
                <tr>
                  <th scope="col">Webhook</th>
                  <th scope="col">Status</th>
                  <th scope="col">Network</th>
                  <th scope="col">Type</th>
                  <th scope="col">Target host</th>
                  <th scope="col">Version</th>
                  <th scope="col">
                    <span className="visually-hidden">Delivery log</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {items.map((w) => (
                  <tr key={w.id} data-testid="operator-webhook">
                    <td data-label="Webhook">
                      {w.name || <code>{w.id}</code>}
                      {w.name && (
                        <div className="muted">
                          <code>{w.id}</code>
                        </div>
                      )}
                      <div className="muted nowrap">{formatDateTime(w.created_at)}</div>
                    </td>
                    <td data-label="Status">
                      <StatusBadge
                        webhook={{ status: w.status, status_label: w.status_label ?? '' }}
                      />
                      {pausedReasonWords(w.paused_reason) && (
                        <div className="muted" data-testid="operator-webhook-paused-reason">
                          {pausedReasonWords(w.paused_reason)}
                        </div>
                      )}
                    </td>
                    <td data-label="Network">{networkLabel(w.network)}</td>
                    <td data-label="Type">{triggerWords(w.trigger_type)}</td>
                    <td data-label="Target host">
                      <code>{w.target_host}</code>
                    </td>
                    <td data-label="Version">{w.version}</td>
                    <td>
                      <button
                        type="button"
                        className="button button-small button-secondary"
                        aria-label={`Delivery log of ${w.name || w.id}`}
                        aria-pressed={open?.id === w.id}
                        onClick={() => setOpen(open?.id === w.id ? undefined : w)}
                      >
                        Delivery log
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            {webhooks.hasNextPage && (
              <div className="actions table-footer">
                <button
                  type="button"
                  className="button button-secondary button-small"
                  disabled={webhooks.isFetchingNextPage}
                  onClick={() => void webhooks.fetchNextPage()}
                >
                  {webhooks.isFetchingNextPage ? 'Loading…' : 'Show more'}
                </button>
              </div>
            )}
          </>
        )}
      </Card>
      {open && (
        <DeliveryLogCard
          key={open.id}
          url={`/api/operator/accounts/${props.accountId}/webhooks/${open.id}/deliveries`}
          queryKey={['operator-webhook-deliveries', props.accountId, open.id]}
          subject={open.name || open.id}
        />
      )}
    </>
  );
}

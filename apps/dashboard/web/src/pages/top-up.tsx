import { useQuery, useQueryClient } from '@tanstack/react-query';
import { api, relay } from '../api';
import { pendingTopUpDelay } from '../auto-refresh';
import { CuAmountForm } from '../components/cu-amount-form';
import { Badge, Card, Empty, ErrorState, Loading, Notice, PageHeader } from '../components/ui';
import { boughtBy } from '../bought-by';
import { formatCu, formatDateTime, formatRelative } from '../format';
import type { Page, TopUp } from '../types';
import { useAutoRefresh } from '../use-auto-refresh';
import { useAccount } from './overview';

const PRESETS = [1_000_000, 10_000_000, 100_000_000];

export function TopUpPage() {
  const account = useAccount();
  const client = useQueryClient();
  const topUps = useQuery({
    queryKey: ['top-ups'],
    queryFn: () => api<Page<TopUp>>('GET', relay('billing', '/top-ups')),
  });
  const pending = (topUps.data?.items ?? []).filter((t) => t.status !== 'cleared');
  // Pending top-ups: asked again when they clear (then with backoff) until none is; the
  // balance with them (useAutoRefresh: only while the tab is visible, and on focus).
  useAutoRefresh({
    refresh: () =>
      Promise.all([
        client.invalidateQueries({ queryKey: ['top-ups'] }),
        client.invalidateQueries({ queryKey: ['account'] }),
      ]),
    nextDelay: pendingTopUpDelay(pending.map((t) => t.clears_at)),
    policyKey: pending.map((t) => `${t.id}@${t.clears_at}`).join(','),
  });
  return (
    <>
      <PageHeader
        title="Top up"
        description="Bought CU clear in one to two minutes, roll over while your plan is active and are spent after the plan allowance."
      />
      {account.data?.self_service_billing === false ? (
        <Card title="Buy compute units">
          <Notice tone="info">
            Compute units and plan changes are granted by the operator of this service once paid;
            ask them to top up your account. Their top-ups are listed below.
          </Notice>
        </Card>
      ) : (
        <Card title="Buy compute units">
          <CuAmountForm<TopUp>
            initial={10_000_000}
            submitLabel="Top up"
            hint="Whole CU; commas may group thousands. Recorded as bought; payment is handled outside this service."
            presets={PRESETS}
            className="form-row"
            confirmTitle={(cu) => `Buy ${formatCu(cu)}?`}
            confirmLabel={(cu) => `Buy ${formatCu(cu)}`}
            confirmBody={(cu) => (
              <p>
                <strong data-testid="confirm-amount">{formatCu(cu)}</strong> will be recorded as
                bought for this account, pending for one to two minutes. No price is shown here:
                payment is handled outside this service.
              </p>
            )}
            // The submission's key: a retry, a double click, a lost answer buy once.
            send={(body, key) =>
              api<TopUp>('POST', relay('billing', '/top-ups'), body, { 'idempotency-key': key })
            }
            onSuccess={() => {
              void client.invalidateQueries({ queryKey: ['top-ups'] });
              void client.invalidateQueries({ queryKey: ['account'] });
            }}
            succeeded={(data) => (
              <Notice tone="ok">
                {formatCu(data.cu)} bought; pending, they clear {formatRelative(data.clears_at)} (
                {formatDateTime(data.clears_at)}).
              </Notice>
            )}
          />
        </Card>
      )}
      <Card title="Top-ups">
        {topUps.isPending ? (
          <Loading />
        ) : topUps.isError ? (
          <ErrorState error={topUps.error} retry={() => void topUps.refetch()} />
        ) : topUps.data.items.length === 0 ? (
          <Empty title="No top-ups yet." />
        ) : (
          // Five columns: at phone width each top-up is a card (`table-stack`); a date never
          // breaks at its hyphens (QA: "2026-11-" / "30 10:34 UTC").
          <table className="table table-stack" data-testid="top-ups">
            <thead>
              <tr>
                <th scope="col">Amount</th>
                <th scope="col">Status</th>
                <th scope="col">Bought</th>
                <th scope="col">Bought by</th>
                <th scope="col">Clears</th>
              </tr>
            </thead>
            <tbody>
              {topUps.data.items.map((t) => (
                <tr key={t.id}>
                  <td data-label="Amount">{formatCu(t.cu)}</td>
                  <td data-label="Status">
                    {t.status === 'cleared' ? (
                      <Badge tone="ok">Cleared</Badge>
                    ) : (
                      <Badge tone="warn">Pending</Badge>
                    )}
                  </td>
                  <td data-label="Bought">
                    <span className="nowrap">{formatDateTime(t.created_at)}</span>
                  </td>
                  <td data-label="Bought by">{boughtBy(t)}</td>
                  <td data-label="Clears">
                    <span className="nowrap">{formatDateTime(t.cleared_at ?? t.clears_at)}</span>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Card>
    </>
  );
}

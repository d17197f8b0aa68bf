import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, ApiError, relay } from '../api';
import { Field } from '../components/field';
import { Badge, Card, Empty, ErrorState, Loading, Notice, PageHeader } from '../components/ui';
import { formatCu, formatDateTime, formatRelative } from '../format';
import type { Page, TopUp } from '../types';
import { useAccount } from './overview';

const PRESETS = [1_000_000, 10_000_000, 100_000_000];

export function TopUpPage() {
  const account = useAccount();
  const client = useQueryClient();
  const topUps = useQuery({
    queryKey: ['top-ups'],
    queryFn: () => api<Page<TopUp>>('GET', relay('billing', '/top-ups')),
  });
  const [cu, setCu] = useState('10000000');
  const buy = useMutation({
    // One key per press: a retried request answers the same top-up instead of buying twice.
    mutationFn: () =>
      api<TopUp>(
        'POST',
        relay('billing', '/top-ups'),
        { cu: Number(cu) },
        { 'idempotency-key': crypto.randomUUID() },
      ),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: ['top-ups'] });
      void client.invalidateQueries({ queryKey: ['account'] });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    buy.mutate();
  };
  const error = buy.error instanceof ApiError ? buy.error : undefined;
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
          <form onSubmit={submit} className="form-row">
            <Field
              label="Compute units"
              hint="Recorded as bought; payment is handled outside this service."
              error={error?.fields['cu']}
            >
              <input
                inputMode="numeric"
                pattern="[0-9]*"
                value={cu}
                onChange={(e) => setCu(e.target.value.replace(/[^0-9]/g, ''))}
              />
            </Field>
            <div className="preset-row" role="group" aria-label="Amount presets">
              {PRESETS.map((p) => (
                <button
                  key={p}
                  type="button"
                  className="button button-secondary button-small"
                  onClick={() => setCu(String(p))}
                >
                  {formatCu(p)}
                </button>
              ))}
            </div>
            <button type="submit" className="button" disabled={buy.isPending || !cu}>
              Top up
            </button>
          </form>
          {buy.isSuccess && (
            <Notice tone="ok">
              {formatCu(buy.data.cu)} bought; pending, they clear{' '}
              {formatRelative(buy.data.clears_at)} ({formatDateTime(buy.data.clears_at)}).
            </Notice>
          )}
          {error && !Object.keys(error.fields).length && (
            <Notice tone="bad">{error.message}</Notice>
          )}
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
          <table className="table" data-testid="top-ups">
            <thead>
              <tr>
                <th scope="col">Amount</th>
                <th scope="col">Status</th>
                <th scope="col">Bought</th>
                <th scope="col">Clears</th>
              </tr>
            </thead>
            <tbody>
              {topUps.data.items.map((t) => (
                <tr key={t.id}>
                  <td>{formatCu(t.cu)}</td>
                  <td>
                    {t.status === 'cleared' ? (
                      <Badge tone="ok">Cleared</Badge>
                    ) : (
                      <Badge tone="warn">Pending</Badge>
                    )}
                  </td>
                  <td>{formatDateTime(t.created_at)}</td>
                  <td>{formatDateTime(t.cleared_at ?? t.clears_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Card>
    </>
  );
}

import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, relay } from '../api';
import { Field } from '../components/field';
import { Badge, Card, Empty, ErrorState, Loading, Notice, PageHeader } from '../components/ui';
import { formatCu, formatDateTime, formatRelative } from '../format';
import { placeErrors } from '../form-errors';
import type { Page, TopUp } from '../types';
import { useSubmission } from '../use-submission';
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
  const buy = useSubmission({
    values: { cu: Number(cu) },
    // The submission's key: a retry, a double click, a lost answer buy once (useSubmission).
    send: (body, key) =>
      api<TopUp>('POST', relay('billing', '/top-ups'), body, { 'idempotency-key': key }),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: ['top-ups'] });
      void client.invalidateQueries({ queryKey: ['account'] });
    },
  });
  const errors = placeErrors(buy.error, { cu: ['cu'] });
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
          <form onSubmit={buy.submit} className="form-row">
            <Field
              label="Compute units"
              hint="Recorded as bought; payment is handled outside this service."
              error={errors.fields.cu}
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
            <button type="submit" className="button" disabled={buy.pending || !cu}>
              Top up
            </button>
          </form>
          {buy.succeeded && buy.data && (
            <Notice tone="ok">
              {formatCu(buy.data.cu)} bought; pending, they clear{' '}
              {formatRelative(buy.data.clears_at)} ({formatDateTime(buy.data.clears_at)}).
            </Notice>
          )}
          {errors.notice && <Notice tone="bad">{errors.notice}</Notice>}
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

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useParams } from 'react-router-dom';
import { api, ApiError } from '../api';
import { Field } from '../components/field';
import { StatusBadge } from '../components/status-badge';
import { Card, Empty, ErrorState, Loading, Notice, PageHeader } from '../components/ui';
import { UsageChart, UsageTable } from '../components/usage-chart';
import { formatCu, formatDateTime, formatNumber, PLAN_NAMES, planName } from '../format';
import type { Account, Page, TopUp, Usage, Webhook } from '../types';

interface Detail {
  email: string | null;
  account: Account;
  usage: Usage;
  usage_by_method: Usage;
  top_ups: Page<TopUp>;
  webhooks: Page<Webhook> | null;
}

export function OperatorAccountPage() {
  const { id } = useParams();
  const client = useQueryClient();
  const detail = useQuery({
    queryKey: ['operator-account', id],
    queryFn: () => api<Detail>('GET', `/api/operator/accounts/${id}`),
  });
  const [plan, setPlan] = useState<string | undefined>();
  const [cu, setCu] = useState('1000000');
  const refresh = () => client.invalidateQueries({ queryKey: ['operator-account', id] });
  const changePlan = useMutation({
    mutationFn: (next: string) => api('PUT', `/api/operator/accounts/${id}/plan`, { plan: next }),
    onSuccess: () => void refresh(),
  });
  const credit = useMutation({
    mutationFn: () =>
      api<TopUp>('POST', `/api/operator/accounts/${id}/top-ups`, { cu: Number(cu) }),
    onSuccess: () => void refresh(),
  });
  if (detail.isPending) return <Loading />;
  if (detail.isError)
    return <ErrorState error={detail.error} retry={() => void detail.refetch()} />;
  const { account, usage, usage_by_method, top_ups, webhooks } = detail.data;
  const selected = plan ?? account.plan ?? 'free';
  const submitPlan = (event: FormEvent) => {
    event.preventDefault();
    changePlan.mutate(selected);
  };
  const submitCredit = (event: FormEvent) => {
    event.preventDefault();
    credit.mutate();
  };
  const creditError = credit.error instanceof ApiError ? credit.error : undefined;
  return (
    <>
      <PageHeader
        title={detail.data.email ?? account.name}
        description={`Account ${account.id}${detail.data.email ? '' : ' · not a dashboard user'}`}
      />
      <div className="grid grid-3">
        <Card title="Plan">
          <p className="metric" data-testid="operator-plan">
            {planName(account.plan)}
          </p>
          <form onSubmit={submitPlan} className="form-row">
            <Field label="Change plan">
              <select value={selected} onChange={(e) => setPlan(e.target.value)}>
                {Object.entries(PLAN_NAMES)
                  .filter(([key]) => key !== 'enterprise')
                  .map(([key, label]) => (
                    <option key={key} value={key}>
                      {label}
                    </option>
                  ))}
              </select>
            </Field>
            <button
              type="submit"
              className="button"
              disabled={changePlan.isPending || selected === account.plan}
            >
              Apply plan
            </button>
          </form>
          {changePlan.isSuccess && (
            <Notice tone="ok">Plan changed; the customer sees the new limits now.</Notice>
          )}
          {changePlan.error && <Notice tone="bad">{changePlan.error.message}</Notice>}
        </Card>
        <Card title="Balance">
          <p className="metric">{formatCu(account.balance.total_cu)}</p>
          <dl className="facts">
            <dt>Allowance left</dt>
            <dd>{formatNumber(account.balance.allowance_cu)}</dd>
            <dt>Purchased</dt>
            <dd>{formatNumber(account.balance.purchased_cu)}</dd>
            <dt>Pending</dt>
            <dd>{formatNumber(account.balance.pending_top_up_cu)}</dd>
          </dl>
        </Card>
        <Card title="Credit a top-up">
          <form onSubmit={submitCredit} noValidate>
            <Field label="Compute units" error={creditError?.fields['cu']}>
              <input
                inputMode="numeric"
                value={cu}
                onChange={(e) => setCu(e.target.value.replace(/[^0-9]/g, ''))}
              />
            </Field>
            <button type="submit" className="button" disabled={credit.isPending || !cu}>
              Credit
            </button>
          </form>
          {credit.isSuccess && (
            <Notice tone="ok">{formatCu(credit.data.cu)} credited; pending until it clears.</Notice>
          )}
          {creditError && !creditError.fields['cu'] && (
            <Notice tone="bad">{creditError.message}</Notice>
          )}
        </Card>
      </div>
      <Card title="Usage (last 30 days)">
        <p className="muted">
          Total {formatCu(usage.total_cu)} in {formatNumber(usage.total_calls)} calls.
        </p>
        <UsageChart items={usage.items} />
        <h3>By method</h3>
        <UsageTable items={usage_by_method.items} by="method" />
      </Card>
      <div className="grid grid-2">
        <Card title="Webhooks">
          {webhooks === null ? (
            <p className="muted">The webhook API did not answer.</p>
          ) : webhooks.items.length === 0 ? (
            <Empty title="No webhooks." />
          ) : (
            <ul className="plain-list">
              {webhooks.items.map((w) => (
                <li key={w.id}>
                  {w.name || w.id} <StatusBadge webhook={w} />{' '}
                  <span className="muted">{w.network}</span>
                </li>
              ))}
            </ul>
          )}
        </Card>
        <Card title="Top-ups">
          {top_ups.items.length === 0 ? (
            <Empty title="No top-ups." />
          ) : (
            <ul className="plain-list">
              {top_ups.items.map((t) => (
                <li key={t.id}>
                  {formatCu(t.cu)}{' '}
                  <span className="muted">
                    ({t.source}, {t.status}, {formatDateTime(t.created_at)})
                  </span>
                </li>
              ))}
            </ul>
          )}
        </Card>
      </div>
    </>
  );
}

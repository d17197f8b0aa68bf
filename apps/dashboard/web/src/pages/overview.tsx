import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router-dom';
import { api, relay } from '../api';
import { pendingTopUpDelay } from '../auto-refresh';
import { exhaustedNotice } from '../balance-words';
import { planPausedSummary } from '../cap-errors';
import { GetStarted } from '../components/get-started';
import { UsageChart, UsageTable } from '../components/usage-chart';
import { Badge, Card, ErrorState, Loading, Notice, PageHeader } from '../components/ui';
import { formatCu, formatDateTime, formatNumber, formatRelative, planName } from '../format';
import type { Account, Usage } from '../types';
import { usageRangeWords, usageWindow } from '../usage-window';
import { useAutoRefresh } from '../use-auto-refresh';
import { useWebhooks } from './webhooks';

export const RANGES = [
  { days: 1, label: 'Last 24 hours' },
  { days: 7, label: 'Last 7 days' },
  { days: 30, label: 'Last 30 days' },
];

export function useUsage(days: number, groupBy: 'day_network' | 'network' | 'method') {
  return useQuery({
    queryKey: ['usage', days, groupBy],
    queryFn: () => {
      const { from, to } = usageWindow(days, Date.now());
      const query = new URLSearchParams({
        from: from.toISOString(),
        to: to.toISOString(),
        group_by: groupBy,
      });
      return api<Usage>('GET', relay('billing', `/account/usage?${query.toString()}`));
    },
  });
}

export function useAccount() {
  return useQuery({
    queryKey: ['account'],
    queryFn: () => api<Account>('GET', relay('billing', '/account')),
  });
}

export function OverviewPage() {
  const account = useAccount();
  const [days, setDays] = useState(7);
  const byDay = useUsage(days, 'day_network');
  const byNetwork = useUsage(days, 'network');
  const byMethod = useUsage(days, 'method');
  const client = useQueryClient();
  const webhooks = useWebhooks();
  const pausedByPlan = planPausedSummary((webhooks.data?.items ?? []).map((w) => w.status));
  const pending = account.data?.balance.pending_top_ups ?? [];
  // The balance asked again when a pending top-up clears (then with backoff) until none is,
  // the usage with it; on focus too (useAutoRefresh: only while the tab is visible).
  useAutoRefresh({
    refresh: () =>
      Promise.all([
        client.invalidateQueries({ queryKey: ['account'] }),
        client.invalidateQueries({ queryKey: ['usage'] }),
      ]),
    nextDelay: pendingTopUpDelay(pending.map((t) => t.clears_at)),
    policyKey: pending.map((t) => `${t.id}@${t.clears_at}`).join(','),
  });
  if (account.isPending) return <Loading />;
  if (account.isError)
    return <ErrorState error={account.error} retry={() => void account.refetch()} />;
  const a = account.data;
  const b = a.balance;
  return (
    <>
      <PageHeader
        title="Overview"
        description={a.name}
        actions={
          <Link className="button" to="/top-up">
            Top up
          </Link>
        }
      />
      <GetStarted />
      {pausedByPlan && (
        <Notice tone="warn">
          <span data-testid="plan-paused-webhooks">{pausedByPlan}</span>.{' '}
          <Link to="/webhooks">See your webhooks</Link>
        </Notice>
      )}
      <div className="grid grid-3">
        <Card title="Plan">
          <p className="metric" data-testid="plan-name">
            {planName(a.plan)}
          </p>
          <dl className="facts">
            <dt>Node requests per second</dt>
            <dd data-testid="cap-node-rps">{formatNumber(a.caps.node_rps)}</dd>
            <dt>Access tokens</dt>
            <dd data-testid="cap-access-tokens">{formatNumber(a.caps.access_tokens)}</dd>
            <dt>Active webhooks</dt>
            <dd data-testid="cap-active-webhooks">
              {formatNumber(a.caps.webhooks['active_webhooks'])}
            </dd>
            <dt>Audit checks per day</dt>
            <dd>{formatNumber(a.caps.audit.checks_per_day)}</dd>
          </dl>
          <p>
            <Link to="/plan">Plans and their limits</Link>
          </p>
        </Card>
        <Card title="CU balance">
          <p className="metric" data-testid="balance-total">
            {formatCu(b.total_cu)}
          </p>
          <p>
            {b.state === 'ok' ? (
              <Badge tone="ok">Spendable</Badge>
            ) : (
              <Badge tone="bad">Exhausted</Badge>
            )}
          </p>
          {b.state !== 'ok' && <p data-testid="exhausted-notice">{exhaustedNotice(b, a.plan)}</p>}
          <dl className="facts">
            <dt>Plan allowance left</dt>
            <dd>
              {formatNumber(b.allowance_cu)} of {formatNumber(b.allowance_total_cu)}
            </dd>
            <dt>Purchased</dt>
            <dd data-testid="balance-purchased">{formatCu(b.purchased_cu)}</dd>
            {b.overdraft_cu > 0 && (
              <>
                <dt>Overdraft</dt>
                <dd data-testid="balance-overdraft">
                  {formatCu(b.overdraft_cu)}, taken from your next top-up
                </dd>
              </>
            )}
            <dt>Next allowance reset</dt>
            <dd data-testid="allowance-reset">
              {b.allowance_resets_at
                ? `${formatDateTime(b.allowance_resets_at)} (${formatRelative(b.allowance_resets_at)})`
                : '—'}
            </dd>
          </dl>
        </Card>
        <Card title="Pending top-ups">
          {b.pending_top_ups.length === 0 ? (
            <p className="muted">No top-up is clearing. Bought CU clear in one to two minutes.</p>
          ) : (
            <ul className="plain-list" data-testid="pending-top-ups">
              {b.pending_top_ups.map((t) => (
                <li key={t.id}>
                  <strong>{formatCu(t.cu)}</strong>{' '}
                  <span className="muted">clears {formatRelative(t.clears_at)}</span>
                </li>
              ))}
            </ul>
          )}
          <p className="muted">Pending total: {formatCu(b.pending_top_up_cu)}</p>
        </Card>
      </div>
      <Card
        title="Usage"
        actions={
          <label className="inline-select">
            <span>Range</span>
            <select value={days} onChange={(e) => setDays(Number(e.target.value))}>
              {RANGES.map((r) => (
                <option key={r.days} value={r.days}>
                  {r.label}
                </option>
              ))}
            </select>
          </label>
        }
      >
        {byDay.isPending ? (
          <Loading />
        ) : byDay.isError ? (
          <ErrorState error={byDay.error} retry={() => void byDay.refetch()} />
        ) : (
          <>
            <p className="muted">
              Total <strong data-testid="usage-total-cu">{formatCu(byDay.data.total_cu)}</strong> in{' '}
              {formatNumber(byDay.data.total_calls)} calls, webhook deliveries included, from{' '}
              <span data-testid="usage-range">
                {usageRangeWords(byDay.data.from, byDay.data.to)}
              </span>{' '}
              (whole hours).
            </p>
            <UsageChart items={byDay.data.items} viewer="customer" />
          </>
        )}
      </Card>
      <div className="grid grid-2">
        <Card title="By network">
          {byNetwork.isPending ? (
            <Loading />
          ) : byNetwork.isError ? (
            <ErrorState error={byNetwork.error} />
          ) : (
            <UsageTable items={byNetwork.data.items} by="network" />
          )}
        </Card>
        <Card title="By method">
          {byMethod.isPending ? (
            <Loading />
          ) : byMethod.isError ? (
            <ErrorState error={byMethod.error} />
          ) : (
            <UsageTable items={byMethod.data.items} by="method" />
          )}
        </Card>
      </div>
    </>
  );
}

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useParams } from 'react-router-dom';
import { api, ApiError } from '../api';
import { pendingTopUpDelay } from '../auto-refresh';
import { boughtBy } from '../bought-by';
import { ConfirmDialog } from '../components/confirm-dialog';
import { CuAmountForm } from '../components/cu-amount-form';
import { Field } from '../components/field';
import { OperatorApiKeys } from '../components/operator-api-keys';
import { OperatorWebhooks } from '../components/operator-webhooks';
import { Card, Empty, ErrorState, Loading, Notice, PageHeader } from '../components/ui';
import { UsageChart, UsageTable } from '../components/usage-chart';
import { formatCu, formatDateTime, formatNumber, PLAN_NAMES, planName } from '../format';
import { operatorAccountFailure } from '../load-failure';
import { outcomeSeen } from '../outcome-unknown';
import { isPlanId, planChangeWords } from '../plan-choice';
import { planOfValue, planPicker } from '../plan-picker';
import type { Account, Page, TopUp, Usage } from '../types';
import { useAutoRefresh } from '../use-auto-refresh';

interface Detail {
  email: string | null;
  account: Account;
  usage: Usage;
  usage_by_method: Usage;
  top_ups: Page<TopUp>;
}

export function OperatorAccountPage() {
  const { id } = useParams();
  const client = useQueryClient();
  const detail = useQuery({
    queryKey: ['operator-account', id],
    queryFn: () => api<Detail>('GET', `/api/operator/accounts/${id}`),
  });
  const [plan, setPlan] = useState<string | undefined>();
  // Apply asks first, as Credit does (QA: it acted at once); the dialog stays until the answer.
  const [confirmingPlan, setConfirmingPlan] = useState(false);
  const refresh = () => client.invalidateQueries({ queryKey: ['operator-account', id] });
  const changePlan = useMutation({
    mutationFn: (next: string) =>
      api('PUT', `/api/operator/accounts/${id}/plan`, { plan: planOfValue(next) }),
    onSuccess: () => void refresh(),
    onSettled: () => setConfirmingPlan(false),
  });
  const pending = (detail.data?.top_ups.items ?? []).filter((t) => t.status !== 'cleared');
  // Its pending top-ups asked again until they clear (useAutoRefresh, as the customer's pages).
  useAutoRefresh({
    refresh,
    nextDelay: pendingTopUpDelay(pending.map((t) => t.clears_at)),
    policyKey: pending.map((t) => `${t.id}@${t.clears_at}`).join(','),
  });
  if (detail.isPending) return <Loading />;
  if (detail.isError) {
    // An unknown account is said as such, with no Try again (a 404 says the same again).
    const failure = operatorAccountFailure(detail.error, id ?? '');
    return failure.kind === 'missing' ? (
      <>
        <PageHeader title={failure.title} />
        <Card>
          <p data-testid="operator-account-missing">
            Billing has no account with this id: check the link, or find the account by its email or
            name.
          </p>
          <Link className="button" to="/operator/accounts">
            Back to Accounts
          </Link>
        </Card>
      </>
    ) : (
      <ErrorState
        error={detail.error}
        {...(failure.retry ? { retry: () => void detail.refetch() } : {})}
      />
    );
  }
  const { account, usage, usage_by_method, top_ups } = detail.data;
  const picker = planPicker(account, plan, PLAN_NAMES);
  const submitPlan = (event: FormEvent) => {
    event.preventDefault();
    if (picker.canApply) setConfirmingPlan(true);
  };
  const chosenPlan = planOfValue(picker.value);
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
          {picker.editable ? (
            <form onSubmit={submitPlan} className="form-row">
              <Field label="Change plan">
                <select value={picker.value} onChange={(e) => setPlan(e.target.value)}>
                  {picker.options.map((option) => (
                    <option key={option.value} value={option.value}>
                      {option.label}
                    </option>
                  ))}
                </select>
              </Field>
              <button
                type="submit"
                className="button"
                disabled={changePlan.isPending || !picker.canApply}
              >
                Apply plan
              </button>
            </form>
          ) : (
            <p className="muted" data-testid="enterprise-note">
              Enterprise comes with a contract (its limits and allowance), which this page cannot
              edit: change it with billing-ledger&apos;s operator API,{' '}
              {/* One long word: it wraps, else it runs out of the card (and past 390 px). */}
              <code className="url">PUT /admin/accounts/{account.id}/plan</code>.
            </p>
          )}
          <ConfirmDialog
            open={confirmingPlan}
            title={`Change the plan to ${planName(chosenPlan)}?`}
            confirmLabel={`Change to ${planName(chosenPlan)}`}
            busy={changePlan.isPending}
            onConfirm={() => changePlan.mutate(picker.value)}
            onCancel={() => {
              if (!changePlan.isPending) setConfirmingPlan(false);
            }}
          >
            <p data-testid="confirm-plan">
              {detail.data.email ?? account.name} moves from {planName(account.plan)} to{' '}
              {planName(chosenPlan)} now.
            </p>
            {chosenPlan && isPlanId(chosenPlan) && (
              <p>{planChangeWords(account.plan, chosenPlan, null).slice(1).join(' ')}</p>
            )}
          </ConfirmDialog>
          {changePlan.isSuccess && (
            <Notice tone="ok">Plan changed; the customer sees the new limits now.</Notice>
          )}
          {changePlan.error &&
            (changePlan.error instanceof ApiError &&
            changePlan.error.outcomeUnknown &&
            outcomeSeen(planOfValue(changePlan.variables), account.plan) === 'applied' ? (
              // Billing timed out but made the change: the page asked again and sees it (QA M5).
              <Notice tone="ok">Plan changed; the customer sees the new limits now.</Notice>
            ) : (
              <Notice tone="bad">{changePlan.error.message}</Notice>
            ))}
        </Card>
        <Card title="Balance">
          <p className="metric">{formatCu(account.balance.total_cu)}</p>
          <dl className="facts">
            <dt>Allowance left</dt>
            <dd>{formatNumber(account.balance.allowance_cu)}</dd>
            <dt>Purchased</dt>
            <dd data-testid="operator-purchased">{formatNumber(account.balance.purchased_cu)}</dd>
            {account.balance.overdraft_cu > 0 && (
              <>
                <dt>Overdraft</dt>
                <dd data-testid="operator-overdraft">
                  {formatNumber(account.balance.overdraft_cu)}
                </dd>
              </>
            )}
            <dt>Pending</dt>
            <dd>{formatNumber(account.balance.pending_top_up_cu)}</dd>
          </dl>
        </Card>
        <Card title="Credit a top-up">
          <CuAmountForm<TopUp>
            initial={1_000_000}
            submitLabel="Credit"
            hint="Whole CU; commas may group thousands."
            confirmTitle={(cu) => `Credit ${formatCu(cu)}?`}
            confirmLabel={(cu) => `Credit ${formatCu(cu)}`}
            confirmBody={(cu) => (
              <p>
                <strong data-testid="confirm-amount">{formatCu(cu)}</strong> will be credited to{' '}
                {detail.data.email ?? account.name} (account {account.id}), pending until it clears.
              </p>
            )}
            // The submission's key: a retry, a double click, a lost answer credit once.
            send={(body, key) =>
              api<TopUp>('POST', `/api/operator/accounts/${id}/top-ups`, body, {
                'idempotency-key': key,
              })
            }
            onSuccess={() => void refresh()}
            succeeded={(data) => (
              <Notice tone="ok">{formatCu(data.cu)} credited; pending until it clears.</Notice>
            )}
          />
        </Card>
      </div>
      <Card title="Usage (last 30 days)">
        <p className="muted">
          Total {formatCu(usage.total_cu)} in {formatNumber(usage.total_calls)} calls.
        </p>
        <UsageChart items={usage.items} viewer="operator" />
        <h3>By method</h3>
        <UsageTable items={usage_by_method.items} by="method" />
      </Card>
      <OperatorWebhooks accountId={account.id} />
      <Card title="Top-ups">
        {top_ups.items.length === 0 ? (
          <Empty title="No top-ups." />
        ) : (
          <ul className="plain-list">
            {top_ups.items.map((t) => (
              <li key={t.id}>
                {formatCu(t.cu)}{' '}
                <span className="muted">
                  ({t.source}, {t.status},{' '}
                  <span className="nowrap">{formatDateTime(t.created_at)}</span>)
                </span>{' '}
                <span data-testid="bought-by">Bought by {boughtBy(t)}</span>
              </li>
            ))}
          </ul>
        )}
      </Card>
      <Card title="API keys">
        <OperatorApiKeys accountId={account.id} />
      </Card>
    </>
  );
}

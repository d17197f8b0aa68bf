import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { PlanId } from '@meridian/plans';
import { api, relay } from '../api';
import { planChangeRoute, upgradeAdvice } from '../cap-errors';
import { ConfirmDialog } from '../components/confirm-dialog';
import { Badge, Card, ErrorState, Loading, Notice, PageHeader } from '../components/ui';
import { formatNumber, planName } from '../format';
import { canChangePlan, planChangeWords, planRows } from '../plan-choice';
import { useSession } from '../session';
import type { Account } from '../types';
import { useAccount } from './overview';
import { useWebhookLimits } from './webhooks';

/**
 * The plans and their limits, the current one marked (ADR 0604 amendment "Plan changes are the
 * owner's"): an owner changes it behind a confirmation (a downgrade says what it pauses) when
 * the deployment lets accounts pay for themselves; a member reads it and asks an owner; with
 * self-service billing off the operator changes plans.
 */
export function PlanPage() {
  const account = useAccount();
  const { session } = useSession();
  const limits = useWebhookLimits();
  const client = useQueryClient();
  const [choice, setChoice] = useState<PlanId | undefined>();
  const change = useMutation({
    mutationFn: (plan: PlanId) => api<Account>('PUT', relay('billing', '/account/plan'), { plan }),
    onSuccess: (data) => {
      client.setQueryData(['account'], data);
      setChoice(undefined);
      void client.invalidateQueries({ queryKey: ['webhook-limits'] });
      void client.invalidateQueries({ queryKey: ['webhooks'] });
    },
  });
  if (account.isPending) return <Loading />;
  if (account.isError)
    return <ErrorState error={account.error} retry={() => void account.refetch()} />;
  const a = account.data;
  const route = planChangeRoute(a.self_service_billing, session.user?.account_role);
  const changeable = canChangePlan(route, a.plan);
  const rows = planRows(a.plan);
  return (
    <>
      <PageHeader title="Plan" description={`Your plan: ${planName(a.plan)}`} />
      {!changeable && (
        <Notice tone="info">
          <span data-testid="plan-change-route">
            {a.plan === 'enterprise'
              ? 'Your Enterprise plan comes with a contract; the operator of this service changes it.'
              : upgradeAdvice(route)}
          </span>
        </Notice>
      )}
      <Card title="Plans">
        <div>
          <table className="table table-stack" data-testid="plans">
            <caption className="visually-hidden">Plans and their limits</caption>
            <thead>
              <tr>
                <th scope="col">Plan</th>
                <th scope="col">CU allowance</th>
                <th scope="col">Node requests per second</th>
                <th scope="col">Access tokens</th>
                <th scope="col">Active webhooks</th>
                <th scope="col">Addresses per webhook</th>
                <th scope="col">Addresses per account</th>
                <th scope="col">Audit checks per day</th>
                {changeable && <th scope="col">Change</th>}
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.id} data-plan={row.id} aria-current={row.current || undefined}>
                  <th scope="row" data-label="Plan">
                    {row.name} {row.current && <Badge tone="ok">Current</Badge>}
                  </th>
                  <td data-label="CU allowance">{row.allowance}</td>
                  <td data-label="Node requests per second">{formatNumber(row.nodeRps)}</td>
                  <td data-label="Access tokens">{formatNumber(row.accessTokens)}</td>
                  <td data-label="Active webhooks">{formatNumber(row.activeWebhooks)}</td>
                  <td data-label="Addresses per webhook">
                    {formatNumber(row.addressesPerWebhook)}
                  </td>
                  <td data-label="Addresses per account">
                    {formatNumber(row.addressesPerAccount)}
                  </td>
                  <td data-label="Audit checks per day">{formatNumber(row.auditChecksPerDay)}</td>
                  {changeable && (
                    <td data-label="Change">
                      {!row.current && (
                        <button
                          type="button"
                          className="button button-secondary button-small"
                          onClick={() => {
                            change.reset();
                            setChoice(row.id);
                          }}
                        >
                          Switch to {row.name}
                        </button>
                      )}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <p className="muted">
          No price is shown: payment is handled outside this service. Enterprise plans come with a
          contract the operator of this service sets.
        </p>
        {change.isSuccess && (
          <Notice tone="ok">
            <span data-testid="plan-changed">Your plan is now {planName(change.data.plan)}.</span>
          </Notice>
        )}
        {change.error && <Notice tone="bad">{change.error.message}</Notice>}
      </Card>
      {choice && (
        <ConfirmDialog
          open
          title={`Switch to ${planName(choice)}?`}
          confirmLabel={`Switch to ${planName(choice)}`}
          busy={change.isPending}
          onConfirm={() => change.mutate(choice)}
          onCancel={() => {
            if (!change.isPending) setChoice(undefined);
          }}
        >
          {planChangeWords(a.plan, choice, limits.data?.usage ?? null).map((line) => (
            <p key={line} data-testid="plan-change-words">
              {line}
            </p>
          ))}
        </ConfirmDialog>
      )}
    </>
  );
}

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Link, useLocation, useNavigate, useParams } from 'react-router-dom';
import { announce } from '../announcer';
import { api, ApiError, relay } from '../api';
import { every, WEBHOOK_VIEW_REFRESH_MS } from '../auto-refresh';
import { resumeAtZeroMessage } from '../balance-words';
import { isCapError, planChangeRoute, planPauseExplanation } from '../cap-errors';
import { ExhaustedNotice } from '../components/exhausted-notice';
import { CapNotice } from '../components/cap-notice';
import { ConfirmDialog } from '../components/confirm-dialog';
import { CopyButton, SecretOnce } from '../components/copy-button';
import { StatusBadge } from '../components/status-badge';
import { Card, ErrorState, Loading, Notice, PageHeader } from '../components/ui';
import { DeliveryLogCard } from '../components/delivery-log-card';
import { describeFilter, type FilterLine } from '../filter-tree';
import { formatDateTime, formatNumber, networkLabel } from '../format';
import {
  previousSecretLines,
  ROTATION_RULE,
  type RotationAnswer,
  rotationNotice,
  rotationRefusal,
  STOP_OLD_SECRETS_LABEL,
} from '../secret-rotation';
import type { DeliveryAttempt, DeliveryStats, Page, Webhook } from '../types';
import { testDeliveryOutcome, testDeliveryRefusal } from '../test-delivery';
import { useAutoRefresh } from '../use-auto-refresh';
import { WebhookConflict } from '../components/webhook-conflict';
import { isVersionMismatch } from '../webhook-edit';
import { changeAtVersion } from '../webhook-version';
import { txHashesOf, type newSecretState } from './webhook-form';
import { useSession } from '../session';
import { useAccount } from './overview';
import { useAddressLists, useWebhookLimits } from './webhooks';

/** What `POST …/secret/rotate` answers: the webhook, its new secret and the old ones' ends. */
interface RotatedSecret extends RotationAnswer {
  secret?: string;
}

/** The page's actions; pause, resume and delete are made at the version shown (If-Match). */
type ActionKind = 'pause' | 'resume' | 'test' | 'rotate' | 'delete';
/** An action and the webhook as the page showed it when the user asked for it. */
interface Action {
  kind: ActionKind;
  at: Webhook;
}
const DONE: Record<'pause' | 'resume' | 'delete', string> = {
  pause: 'paused',
  resume: 'resumed',
  delete: 'deleted',
};

/** An answer that is the webhook itself (pause, resume, rotate), without a secret it holds. */
function webhookOf(result: unknown, id: string | undefined): Webhook | undefined {
  const w = result as Partial<Webhook> | null;
  if (!w || w.id !== id || typeof w.version !== 'number') return undefined;
  const webhook = { ...w } as Webhook;
  delete webhook.secret;
  return webhook;
}

/** Inline addresses shown before the rest fold away. */
const SHOWN_ADDRESSES = 10;

function AddressesFact(props: { addresses: string[]; hasTree: boolean }) {
  const { addresses } = props;
  if (addresses.length === 0) return <>{props.hasTree ? 'none outside the filter' : 'none'}</>;
  const item = (a: string) => (
    <li key={a}>
      <code>{a}</code>
    </li>
  );
  return (
    <>
      <ul className="plain-list fact-list" data-testid="inline-addresses">
        {addresses.slice(0, SHOWN_ADDRESSES).map(item)}
      </ul>
      {addresses.length > SHOWN_ADDRESSES && (
        <details>
          <summary>Show all {formatNumber(addresses.length)}</summary>
          <ul className="plain-list fact-list">{addresses.slice(SHOWN_ADDRESSES).map(item)}</ul>
        </details>
      )}
    </>
  );
}

/** The filter tree set through the API, one node a line, nested as the tree is (read-only). */
function FilterTree(props: { line: FilterLine }) {
  const { line } = props;
  return (
    <li>
      <span>{line.text}</span>
      {line.values.length > 0 && (
        <ul className="filter-values">
          {line.values.map((v, i) => (
            <li key={`${i}-${v.text}`}>
              {v.listId ? (
                <>
                  list <Link to={`/address-lists?list=${v.listId}`}>{v.text}</Link>
                </>
              ) : (
                <code>{v.text}</code>
              )}
            </li>
          ))}
          {line.more > 0 && <li className="muted">and {formatNumber(line.more)} more</li>}
        </ul>
      )}
      {line.children.length > 0 && (
        <ul className="filter-tree">
          {line.children.map((child, i) => (
            <FilterTree key={i} line={child} />
          ))}
        </ul>
      )}
    </li>
  );
}

/** A replay the API refused: while not active (409 webhook_not_active) it says what to do. */
function ReplayError(props: { error: unknown; statusLabel: string }) {
  if (props.error instanceof ApiError && props.error.code === 'webhook_not_active')
    return (
      <Notice tone="bad">
        <span data-testid="replay-error">
          Nothing was replayed: this webhook is {props.statusLabel.toLowerCase()}, and replays go
          out only while it is active. Resume it, then replay the event.
        </span>
      </Notice>
    );
  const message = props.error instanceof Error ? props.error.message : 'the replay failed';
  return (
    <Notice tone="bad">
      <span data-testid="replay-error">Nothing was replayed: {message}.</span>
    </Notice>
  );
}

function ActionError(props: { error: unknown }) {
  const account = useAccount();
  if (!(props.error instanceof ApiError)) return null;
  if (props.error.code === 'insufficient_balance')
    return (
      <Notice tone="bad">
        <span data-testid="resume-at-zero">
          {resumeAtZeroMessage(account.data?.balance ?? null, account.data?.plan ?? null)}
        </span>{' '}
        <Link to="/top-up">Top up</Link>
      </Notice>
    );
  if (isCapError(props.error.code)) return <CapNotice error={props.error} />;
  const refusedTest = testDeliveryRefusal(
    props.error.code,
    props.error.body,
    props.error.retryAfterSeconds,
  );
  if (refusedTest)
    return (
      <Notice tone="bad">
        <span data-testid="test-delivery-refused">{refusedTest}</span>
      </Notice>
    );
  const refusedRotation = rotationRefusal(props.error.code, props.error.body);
  if (refusedRotation)
    return (
      <Notice tone="bad">
        <span data-testid="rotation-refused">{refusedRotation}</span>
      </Notice>
    );
  return <Notice tone="bad">{props.error.message}</Notice>;
}

/**
 * Why a paused_plan webhook is paused: the per-webhook caps it is over (its record's `usage`, as
 * the API counts it for those caps), else the account's limits, with the way to them.
 */
function PlanPauseNotice(props: { webhook: Webhook }) {
  const limits = useWebhookLimits();
  const account = useAccount();
  const { session } = useSession();
  if (!limits.data) return null;
  const route = account.data
    ? planChangeRoute(account.data.self_service_billing, session.user?.account_role)
    : undefined;
  return (
    <Notice tone="warn">
      <span data-testid="plan-pause-explanation">
        {planPauseExplanation(limits.data, props.webhook.usage ?? null, route)}
      </span>{' '}
      <Link to="/webhooks">See your plan&apos;s limits</Link>.
    </Notice>
  );
}

/** How long the page polls for a test delivery's outcome (it arrives within seconds). */
const TEST_POLL_MS = 1_000;
const TEST_POLL_FOR_MS = 120_000;

/**
 * A test delivery just queued: pending, then delivered (with the endpoint's status) or failed
 * (with the status or the error), read from that event's attempts, polled until one is final.
 */
function TestDeliveryResult(props: { webhookId: string; eventId: string; queuedAt: number }) {
  const { webhookId, eventId, queuedAt } = props;
  const client = useQueryClient();
  const attempts = useQuery({
    queryKey: ['test-delivery', webhookId, eventId],
    queryFn: () =>
      api<Page<DeliveryAttempt>>(
        'GET',
        relay(
          'webhooks',
          `/webhooks/${webhookId}/deliveries?event_id=${encodeURIComponent(eventId)}`,
        ),
      ),
    refetchInterval: (query) =>
      testDeliveryOutcome(query.state.data?.items ?? []).state === 'pending' &&
      Date.now() - queuedAt < TEST_POLL_FOR_MS
        ? TEST_POLL_MS
        : false,
  });
  const outcome = testDeliveryOutcome(attempts.data?.items ?? []);
  // A refused test joins the failed log below without a reload.
  useEffect(() => {
    if (outcome.state === 'failed')
      void client.invalidateQueries({ queryKey: ['webhook-deliveries', webhookId] });
  }, [outcome.state, client, webhookId]);
  const id = <code data-testid="test-delivery-event">{eventId}</code>;
  if (outcome.state === 'pending') {
    const late = Date.now() - queuedAt >= TEST_POLL_FOR_MS && !attempts.isFetching;
    return (
      <Notice tone={attempts.isError ? 'bad' : 'info'}>
        <span data-testid="test-delivery" data-state="pending">
          Test delivery {id} queued (free):{' '}
          {attempts.isError
            ? `its outcome could not be read: ${attempts.error.message}`
            : late
              ? 'no outcome recorded yet.'
              : "waiting for your endpoint's answer…"}
        </span>{' '}
        {(late || attempts.isError) && (
          <button
            type="button"
            className="button button-small button-secondary"
            onClick={() => void attempts.refetch()}
          >
            Check again
          </button>
        )}
      </Notice>
    );
  }
  return (
    <Notice tone={outcome.state === 'delivered' ? 'ok' : 'bad'}>
      <span data-testid="test-delivery" data-state={outcome.state}>
        Test delivery {id} {outcome.text}.
      </span>
    </Notice>
  );
}

/** A deleted or unknown webhook (a stale link): said so, with the way back to the list. */
function WebhookGone() {
  return (
    <>
      <PageHeader title="Webhook not found" />
      <Card>
        <p data-testid="webhook-gone">
          This webhook does not exist: it was deleted, or the link is mistyped.
        </p>
        <Link className="button" to="/webhooks">
          Back to your webhooks
        </Link>
      </Card>
    </>
  );
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
  // The webhook itself (its settings and status: a colleague's pause or edit), its stats and
  // failed deliveries asked again while the page is open and the tab visible, and on focus
  // (useAutoRefresh). Nothing here is edited in place (the form is its own page, which keeps
  // what is typed against the version it loaded), so a newer webhook simply replaces the view.
  useAutoRefresh({
    refresh: () =>
      Promise.all([
        client.invalidateQueries({ queryKey: ['webhook', id] }),
        client.invalidateQueries({ queryKey: ['webhook-stats', id] }),
        client.invalidateQueries({ queryKey: ['webhook-deliveries', id] }),
      ]),
    nextDelay: every(WEBHOOK_VIEW_REFRESH_MS),
    policyKey: id ?? '',
  });
  const location = useLocation();
  // The secret of a webhook just created (the form navigates here with it): shown once, and
  // dropped from the history entry at once so a reload shows the webhook without it.
  const [created, setCreated] = useState(
    () => (location.state as ReturnType<typeof newSecretState> | null)?.newSecret,
  );
  useEffect(() => {
    if ((location.state as ReturnType<typeof newSecretState> | null)?.newSecret)
      navigate('.', { replace: true, state: null });
  }, [location.state, navigate]);
  const lists = useAddressLists();
  const [secret, setSecret] = useState<RotatedSecret | undefined>();
  /** The rotation dialog's choice: the old secrets stop at once (one leaked), not in 24 h. */
  const [expireNow, setExpireNow] = useState(false);
  const [confirm, setConfirm] = useState<'delete' | 'rotate' | undefined>();
  /** The webhook as shown when Delete was pressed: the version its confirmation deletes. */
  const [deleteAt, setDeleteAt] = useState<Webhook | undefined>();
  /**
   * A pause, resume or delete refused (412) because a colleague changed the webhook after the
   * page showed it: the action and that version, said beside the current one.
   */
  const [conflict, setConflict] = useState<Action | undefined>();
  /** The test delivery sent last from this page, whose outcome is shown under the actions. */
  const [sentTest, setSentTest] = useState<{ eventId: string; queuedAt: number } | undefined>();
  const refresh = () => {
    void client.invalidateQueries({ queryKey: ['webhook', id] });
    void client.invalidateQueries({ queryKey: ['webhooks'] });
    void client.invalidateQueries({ queryKey: ['webhook-limits'] });
  };
  const action = useMutation({
    // A new rotation clears the last one's secret, so a refused one never sits above it.
    onMutate: ({ kind }) => {
      if (kind === 'rotate') setSecret(undefined);
    },
    mutationFn: async ({ kind, at }: Action): Promise<unknown> => {
      // Only at the version the user saw (ADR 0404): a colleague's change since is said first.
      if (kind === 'delete' || kind === 'pause' || kind === 'resume')
        return changeAtVersion(client, kind, at.id, at.version);
      if (kind === 'rotate')
        return api<RotatedSecret>(
          'POST',
          relay('webhooks', `/webhooks/${id}/secret/rotate`),
          expireNow ? { expire_previous: true } : {},
        );
      return api('POST', relay('webhooks', `/webhooks/${id}/test`), {});
    },
    onSuccess: (result, { kind }) => {
      setConfirm(undefined);
      setConflict(undefined);
      setSentTest(undefined);
      // The answer is the webhook at its new version: the next action is made at that one, not
      // at the one shown before (which the matcher would refuse as a colleague's change).
      const changed = webhookOf(result, id);
      if (changed && kind !== 'delete') client.setQueryData(['webhook', id], changed);
      if (kind === 'delete') {
        refresh();
        navigate('/webhooks');
        return;
      }
      if (kind === 'pause') announce('Webhook paused.');
      if (kind === 'resume')
        announce(changed?.status === 'active' ? 'Webhook resumed: active.' : 'Webhook resumed.');
      if (kind === 'rotate') setSecret(result as RotatedSecret);
      if (kind === 'test') {
        const eventId = (result as { event_id?: string } | null)?.event_id;
        if (eventId) setSentTest({ eventId, queuedAt: Date.now() });
      }
      refresh();
    },
    // A refused delete or rotate is shown on the page, not behind the modal; a delete refused
    // for a colleague's change asks again in its dialog, against the current version.
    onError: (error, acted) => {
      const changedMeanwhile =
        error instanceof ApiError && isVersionMismatch(error) && acted.kind !== 'test';
      setConflict(changedMeanwhile ? acted : undefined);
      if (!(changedMeanwhile && acted.kind === 'delete')) setConfirm(undefined);
    },
  });
  const replay = useMutation({
    mutationFn: (eventId: string) =>
      api<{ replayed: number; event_ids: string[] }>(
        'POST',
        relay('webhooks', `/webhooks/${id}/deliveries/${encodeURIComponent(eventId)}/replay`),
        {},
      ),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: ['webhook-deliveries', id] });
      void client.invalidateQueries({ queryKey: ['webhook-stats', id] });
    },
  });
  if (webhook.isPending) return <Loading />;
  if (webhook.isError)
    return webhook.error instanceof ApiError && webhook.error.status === 404 ? (
      <WebhookGone />
    ) : (
      <ErrorState error={webhook.error} retry={() => void webhook.refetch()} />
    );
  const w = webhook.data;
  const txHashes = txHashesOf(w.filters);
  const paused = w.status !== 'active';
  const hasTree = w.filters !== null && w.filters !== undefined;
  const listName = (ref: string) => lists.data?.items.find((l) => l.id === ref)?.name;
  // The version now current, once asked for after the refusal (until then, a loading line).
  const newer = conflict && w.version !== conflict.at.version ? w : undefined;
  const listNamed = (ref: string) => listName(ref) ?? ref;
  // Whether the refused action still does something to the current version.
  const stillApplies =
    conflict?.kind === 'pause' ? w.status === 'active' : conflict?.kind === 'resume' && paused;
  return (
    <>
      <PageHeader
        title={w.name || w.id}
        description={`${networkLabel(w.network)} · ${w.trigger_type.replace(/_/g, ' ')}`}
        actions={
          <>
            <StatusBadge webhook={w} />
            <Link className="button button-secondary" to={`/webhooks/${w.id}/edit`}>
              Edit
            </Link>
          </>
        }
      />
      {created && (
        <Card title="Webhook created">
          <SecretOnce label="Signing secret" value={created} onDone={() => setCreated(undefined)} />
          <p>
            Verify each delivery&apos;s <code>X-Signature</code> (or the Standard Webhooks headers)
            with this secret. Rotate it below if it is lost.
          </p>
        </Card>
      )}
      <ExhaustedNotice />
      {w.status === 'paused_plan' && <PlanPauseNotice webhook={w} />}
      <Card title="Actions">
        <div className="actions">
          {/* One button whose words change, never disabled while its request is in flight: a
              disabled or replaced button loses the focus to the page's body (QA). What it did
              is announced (announcer.ts). */}
          <button
            type="button"
            className={paused ? 'button' : 'button button-secondary'}
            aria-disabled={action.isPending || undefined}
            onClick={() => {
              if (!action.isPending) action.mutate({ kind: paused ? 'resume' : 'pause', at: w });
            }}
          >
            {paused ? 'Resume' : 'Pause'}
          </button>
          <button
            type="button"
            className="button button-secondary"
            disabled={action.isPending || paused}
            onClick={() => action.mutate({ kind: 'test', at: w })}
          >
            Send test delivery
          </button>
          <button
            type="button"
            className="button button-secondary"
            onClick={() => {
              setExpireNow(false);
              setConfirm('rotate');
            }}
          >
            Rotate secret
          </button>
          <button
            type="button"
            className="button button-danger"
            onClick={() => {
              setConflict(undefined);
              setDeleteAt(w);
              setConfirm('delete');
            }}
          >
            Delete
          </button>
        </div>
        {action.error && !(conflict && isVersionMismatch(action.error as ApiError | null)) && (
          <ActionError error={action.error} />
        )}
        {conflict && conflict.kind !== 'delete' && (
          <WebhookConflict
            actedOn={conflict.at}
            current={newer}
            kept={`Nothing was ${DONE[conflict.kind as 'pause' | 'resume']}.`}
            listName={listNamed}
          >
            {newer && (
              <div className="actions">
                {stillApplies ? (
                  <button
                    type="button"
                    className="button"
                    disabled={action.isPending}
                    onClick={() => action.mutate({ kind: conflict.kind, at: newer })}
                  >
                    {conflict.kind === 'pause' ? 'Pause' : 'Resume'} the current version
                  </button>
                ) : (
                  <p>It is {w.status_label.toLowerCase()} already.</p>
                )}
                <button
                  type="button"
                  className="button button-secondary"
                  onClick={() => setConflict(undefined)}
                >
                  {stillApplies ? 'Keep it as it is' : 'Close'}
                </button>
              </div>
            )}
          </WebhookConflict>
        )}
        {sentTest && (
          <TestDeliveryResult
            key={sentTest.eventId}
            webhookId={w.id}
            eventId={sentTest.eventId}
            queuedAt={sentTest.queuedAt}
          />
        )}
        {secret?.secret && (
          <>
            <SecretOnce
              label="New signing secret"
              value={secret.secret}
              onDone={() => setSecret(undefined)}
            />
            <p data-testid="previous-secret">{rotationNotice(secret)}</p>
          </>
        )}
      </Card>
      <div className="grid grid-2">
        <Card title="Settings">
          <dl className="facts">
            <dt>Webhook id</dt>
            <dd>
              <span className="copy-inline">
                <code data-testid="webhook-id">{w.id}</code>
                <CopyButton value={w.id} label="Copy webhook id" />
              </span>
              <span className="muted hint">
                <code>webhookId</code> in every delivery
              </span>
            </dd>
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
            <dd>
              <AddressesFact addresses={w.addresses ?? []} hasTree={hasTree} />
            </dd>
            <dt>Address lists</dt>
            <dd data-testid="list-refs">
              {w.list_refs?.length
                ? w.list_refs.map((ref, i) => (
                    <span key={ref}>
                      {i > 0 && ', '}
                      <Link to={`/address-lists?list=${ref}`}>{listName(ref) ?? ref}</Link>
                    </span>
                  ))
                : hasTree
                  ? 'none outside the filter'
                  : 'none'}
            </dd>
            {hasTree && (
              <>
                <dt>Filter</dt>
                <dd>
                  <ul className="filter-tree filter-root" data-testid="filter-tree">
                    <FilterTree line={describeFilter(w.filters, listName)} />
                  </ul>
                </dd>
              </>
            )}
            <dt>Old secrets still signing</dt>
            <dd>
              <ul className="plain-list fact-list" data-testid="previous-secrets">
                {/* Two secrets rotated out in one minute read alike: keyed by place, not text
                    (duplicate keys left a removed line on the page). */}
                {previousSecretLines(w.previous_secrets_expire_at).map((line, i) => (
                  <li key={i}>{line}</li>
                ))}
              </ul>
            </dd>
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
      <DeliveryLogCard
        url={relay('webhooks', `/webhooks/${w.id}/deliveries`)}
        queryKey={['webhook-deliveries', id]}
        replay={{ pending: replay.isPending, onReplay: (eventId) => replay.mutate(eventId) }}
        notices={
          <>
            {replay.error && <ReplayError error={replay.error} statusLabel={w.status_label} />}
            {replay.data && (
              <Notice tone="ok">
                <span data-testid="replay-queued">
                  Replay queued: {formatNumber(replay.data.replayed)}{' '}
                  {replay.data.replayed === 1 ? 'delivery goes' : 'deliveries go'} out again for{' '}
                  {replay.data.event_ids.join(', ')}, each attempt billed like any other.
                </span>
              </Notice>
            )}
          </>
        }
      />
      <ConfirmDialog
        open={confirm !== undefined}
        title={confirm === 'delete' ? 'Delete this webhook?' : 'Rotate the signing secret?'}
        confirmLabel={confirm === 'delete' ? 'Delete webhook' : 'Rotate secret'}
        danger={confirm === 'delete'}
        // After a colleague's change, only once the current version is shown (it is the one
        // deleted).
        busy={action.isPending || (conflict?.kind === 'delete' && !newer)}
        onCancel={() => {
          setConfirm(undefined);
          if (conflict?.kind === 'delete') setConflict(undefined);
        }}
        onConfirm={() => {
          if (confirm === 'rotate') action.mutate({ kind: 'rotate', at: w });
          if (confirm === 'delete')
            action.mutate({
              kind: 'delete',
              at: conflict?.kind === 'delete' ? (newer ?? conflict.at) : (deleteAt ?? w),
            });
        }}
      >
        {confirm === 'delete' ? (
          <>
            {conflict?.kind === 'delete' && (
              <WebhookConflict
                actedOn={conflict.at}
                current={newer}
                kept="Nothing was deleted."
                listName={listNamed}
              />
            )}
            <p>
              {conflict?.kind === 'delete' ? 'Delete it as it is now? ' : ''}Deliveries stop and its
              slot is freed. This cannot be undone.
            </p>
          </>
        ) : (
          <>
            <p>
              A new secret signs from now on; the old one keeps signing alongside it for 24 hours,
              so your endpoint can switch without refusing a delivery.
            </p>
            <p data-testid="rotation-rule">{ROTATION_RULE}</p>
            <label className="check">
              <input
                type="checkbox"
                checked={expireNow}
                onChange={(e) => setExpireNow(e.target.checked)}
              />
              {STOP_OLD_SECRETS_LABEL}
            </label>
            <p className="muted hint">
              Deliveries then carry only the new signature: anyone holding an old secret can no
              longer forge one, and your endpoint refuses deliveries until it has the new secret.
            </p>
          </>
        )}
      </ConfirmDialog>
    </>
  );
}

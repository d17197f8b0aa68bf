import { DomainError } from '@meridian/errors';
import { dropReasonOf, WEBHOOK_STATUSES, type WebhookStatus } from '@meridian/webhooks';
import { relayRuleFor } from '../customer/relay-rules';
import { upstreamError, type UpstreamAnswer } from '../upstream/upstream.client';

/** The members of webhook-matcher's webhook object the operator's page reads. */
export interface MatcherWebhook {
  id: string;
  name: string | null;
  status: string;
  status_label: string | null;
  network: string;
  trigger_type: string;
  target_url: string;
  version: number;
  created_at: string;
  updated_at: string;
}

/**
 * Why a webhook is not active, the status machine's own reason (`dropReasonOf`: the owner paused
 * it, the service did after failures, the plan's limits, no CU); null while active.
 */
export type PausedReason = Exclude<ReturnType<typeof dropReasonOf>, 'deleted'> | null;

/** One line of the operator's webhook list (`GET /api/operator/accounts/{id}/webhooks`). */
export interface OperatorWebhook {
  id: string;
  name: string | null;
  status: string;
  status_label: string | null;
  paused_reason: PausedReason;
  network: string;
  trigger_type: string;
  /** The target's host only: its path and query may carry the customer's own secret. */
  target_host: string;
  version: number;
  created_at: string;
  updated_at: string;
}

export function operatorWebhookView(webhook: MatcherWebhook): OperatorWebhook {
  return {
    id: webhook.id,
    name: webhook.name,
    status: webhook.status,
    status_label: webhook.status_label,
    paused_reason: pausedReasonOf(webhook.status),
    network: webhook.network,
    trigger_type: webhook.trigger_type,
    target_host: hostOf(webhook.target_url),
    version: webhook.version,
    created_at: webhook.created_at,
    updated_at: webhook.updated_at,
  };
}

function pausedReasonOf(status: string): PausedReason {
  if (!(WEBHOOK_STATUSES as readonly string[]).includes(status)) return null;
  const reason = dropReasonOf(status as WebhookStatus);
  return reason === 'deleted' ? null : reason;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}

/**
 * The matcher's path of one webhook's log for the operator, if the customer's relay would let a
 * page read that webhook's log (`RELAY_RULES`: one rule for which ids reach the matcher); a path
 * it refuses is 404 as the relay answers it.
 */
export function deliveryLogPath(accountId: string, webhookId: string): string {
  if (!relayRuleFor('webhooks', 'GET', `/webhooks/${webhookId}/deliveries`))
    throw new DomainError('not_found', 'not_found', 'no webhook of the account with this id');
  return `/admin/accounts/${encodeURIComponent(accountId)}/webhooks/${webhookId}/deliveries`;
}

/** The query string of a request URL as sent (without `?`), as the relay passes it on. */
export function rawQuery(url: string): string | undefined {
  const at = url.indexOf('?');
  return at < 0 ? undefined : url.slice(at + 1) || undefined;
}

/**
 * A refusal of the matcher's operator read as the BFF answers it: the client's mistakes (400
 * with the `location` and `path` the matcher names, 404) keep their code and words, as the customer's relay
 * passes them; the matcher refusing the operator token is the deployment's fault, not the
 * caller's (503, never a 401 that would read as the operator's session ending).
 */
export function operatorReadRefusal(answer: UpstreamAnswer): DomainError {
  if (answer.status === 401 || answer.status === 403)
    return new DomainError(
      'upstream_unavailable',
      'unavailable',
      'webhooks refused the operator token (OPERATOR_TOKEN of the dashboard and webhook-matcher)',
    );
  const error = upstreamError('webhooks', answer);
  const { location, path } = (answer.body ?? {}) as { location?: unknown; path?: unknown };
  if (typeof path !== 'string') return error;
  return new DomainError(error.code, error.kind, error.message, {
    details: typeof location === 'string' ? { location, path } : { path },
  });
}

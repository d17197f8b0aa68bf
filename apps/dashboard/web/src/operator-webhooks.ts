/**
 * The operator's read of an account's webhooks (`GET /api/operator/accounts/{id}/webhooks`): the
 * line the BFF answers and the words of a paused webhook's reason. Pure, so unit-tested.
 */

/** Why a webhook is not active: the status machine's reason (null while active). */
export type PausedReason = 'owner_paused' | 'auto_paused' | 'plan_paused' | 'no_balance' | null;

export interface OperatorWebhook {
  id: string;
  name: string | null;
  status: string;
  status_label: string | null;
  paused_reason: PausedReason;
  network: string;
  trigger_type: string;
  /** Only the host of its target URL (the path may carry the customer's secret). */
  target_host: string;
  version: number;
  created_at: string;
  updated_at: string;
}

const REASONS: Record<Exclude<PausedReason, null>, string> = {
  owner_paused: 'Paused by the customer (Pause on its page or the API); Resume is theirs.',
  auto_paused:
    'Paused by the service: its deliveries kept failing. The failed log says why; the customer ' +
    'resumes it once the endpoint answers.',
  plan_paused: "Paused by the plan: the account is over its plan's webhook limits.",
  no_balance: 'Paused for the balance: the account ran out of CU with events to deliver.',
};

/** What the operator tells a customer asking why a webhook did not fire; null while active. */
export function pausedReasonWords(reason: PausedReason | string): string | null {
  return reason !== null && Object.hasOwn(REASONS, reason)
    ? REASONS[reason as Exclude<PausedReason, null>]
    : null;
}

/** A trigger type as words (`address_activity` → "address activity"). */
export function triggerWords(type: string): string {
  return type.replace(/_/g, ' ');
}

import { spendableCu } from '@meridian/compute-units';
import { DomainError } from '@meridian/errors';

/**
 * The spec's webhook status table ("States and transitions"), as one pure function every
 * trigger goes through: owner actions (API), plan changes and balance (billing events), and the
 * service decisions (delivery health, fed by delivery-worker's outcomes). Callers gather the
 * facts (does the webhook fit the plan, is the balance empty, is a top-up clearing); this module
 * decides and names what leaving `active` does to queued events.
 */
export const WEBHOOK_STATUSES = [
  'active',
  'paused',
  'paused_auto',
  'paused_plan',
  'paused_no_balance',
  'deleted',
] as const;
/** Same values as the contracts' WebhookStatusSchema (domain libs do not import contracts). */
export type WebhookStatus = (typeof WEBHOOK_STATUSES)[number];

export const STATUS_LABELS: Readonly<Record<WebhookStatus, string | null>> = Object.freeze({
  active: 'Active',
  paused: 'Paused',
  paused_auto: 'Paused automatically',
  paused_plan: 'Paused: over plan limits',
  paused_no_balance: 'Paused: out of CU',
  deleted: null,
});

/** The dashboard label of the spec (none for deleted). */
export function statusLabel(status: WebhookStatus): string | null {
  return STATUS_LABELS[status];
}

/** Statuses the service sets; an owner pause over one of them makes it an owner pause. */
export const SERVICE_PAUSED: readonly WebhookStatus[] = [
  'paused_auto',
  'paused_plan',
  'paused_no_balance',
];

export type DropReason = 'owner_paused' | 'auto_paused' | 'no_balance' | 'plan_paused' | 'deleted';

/**
 * What happens to events already queued for a webhook in `status` (null: delivered). The spec
 * names `auto_paused` and `no_balance`; owner pause, plan pause and delete drop too (rule 1 of
 * the states: paused webhooks' events are not sent after the resume).
 */
export function dropReasonOf(status: WebhookStatus): DropReason | null {
  switch (status) {
    case 'active':
      return null;
    case 'paused':
      return 'owner_paused';
    case 'paused_auto':
      return 'auto_paused';
    case 'paused_no_balance':
      return 'no_balance';
    case 'paused_plan':
      return 'plan_paused';
    case 'deleted':
      return 'deleted';
  }
}

/** The webhook's latest return to `active` from a paused status: when, and the status it left. */
export interface Reactivation {
  readonly at: Date;
  readonly from: WebhookStatus;
}

/**
 * Why a queued event (a delivery job created at `queuedAt`) is dropped now, or null to deliver
 * it. A webhook that is not active drops it (`dropReasonOf`). An active one drops it too when it
 * was queued before the webhook's latest `reactivation`, with the reason of the status then left
 * (spec, rule 1 of the states: in every paused status events "are not queued and are not sent
 * after the resume"; the table's "paused | queued events dropped"): the pause dropped it, even if
 * no look happened while paused (QA: pause and resume between two retries, attempt 3 was sent).
 * `queuedAt` and `reactivation.at` must come from one clock (both are webhook-matcher's).
 * An earlier pause than the latest one is not known here: its events take the latest one's reason.
 */
export function queuedEventDropReason(
  status: WebhookStatus,
  queuedAt: Date,
  reactivation?: Reactivation,
): DropReason | null {
  const now = dropReasonOf(status);
  if (now !== null || reactivation === undefined) return now;
  return queuedAt.getTime() < reactivation.at.getTime() ? dropReasonOf(reactivation.from) : null;
}

export type StatusTrigger =
  | 'create'
  | 'owner_pause'
  | 'owner_resume'
  | 'owner_delete'
  | 'plan_change'
  | 'auto_pause'
  | 'no_balance';

export interface TransitionFacts {
  /**
   * The webhook fits the account's plan (counted by @meridian/plans `fittingWebhooks`); when it
   * does not, the error that names the cap it is over. Needed by create, resume, plan_change.
   */
  readonly planFit?:
    { readonly fits: true } | { readonly fits: false; readonly error: DomainError };
  /**
   * Team account without a plan: 403 plan_required on create and on a resume, judged before the
   * balance and the plan fit (its caps are all 0 and its balance often empty, so a 409 would name
   * a symptom, not the missing plan). An update that a cap would refuse says the same
   * (`refusalWithoutPlan`).
   */
  readonly planRequired?: boolean;
  /**
   * Balance facts for a resume from any paused status (spec: refused while the balance is empty).
   * `topUpClearing`: the pending top-ups leave CU to spend once they clear (`balanceForResume`).
   */
  readonly balance?: { readonly exhausted: boolean; readonly topUpClearing: boolean };
}

/** Billing's balance state as a resume reads it (BalanceStateChanged's pools). */
export interface BalancePools {
  readonly exhausted: boolean;
  /** Remaining allowance (never below zero in the ledger). */
  readonly allowanceCu: number;
  /** Purchased CU; below zero it is a debt (overdraft) the next top-up pays first. */
  readonly purchasedCu: number;
  readonly pendingTopUpCu: number;
}

/**
 * Rule 2 ("a resume in that gap is accepted") holds for a top-up that will leave CU to spend
 * once it clears: one that only pays the debt of an overdraft leaves the balance empty, so the
 * resume is refused like any at an empty balance (QA: 100 CU pending over a 970,000 CU overdraft
 * was accepted and the webhook stayed at zero).
 */
export function balanceForResume(pools: BalancePools): NonNullable<TransitionFacts['balance']> {
  // A clearing top-up pays the debt first: what is left of it is purchased CU.
  const spendableAfterClearing = spendableCu(
    pools.allowanceCu,
    pools.purchasedCu + pools.pendingTopUpCu,
  );
  return { exhausted: pools.exhausted, topUpClearing: spendableAfterClearing > 0 };
}

export type TransitionResult =
  | {
      readonly kind: 'change';
      readonly from: WebhookStatus | null;
      readonly to: WebhookStatus;
      readonly dropReason: DropReason | null;
    }
  | { readonly kind: 'unchanged'; readonly status: WebhookStatus }
  | { readonly kind: 'refused'; readonly error: DomainError };

const change = (from: WebhookStatus | null, to: WebhookStatus): TransitionResult => ({
  kind: 'change',
  from,
  to,
  dropReason: dropReasonOf(to),
});
const unchanged = (status: WebhookStatus): TransitionResult => ({ kind: 'unchanged', status });
const refused = (error: DomainError): TransitionResult => ({ kind: 'refused', error });

export const webhookNotFound = () => new DomainError('not_found', 'not_found', 'no such webhook');

/**
 * Said neutrally of the allowance (QA: "the daily allowance" on an Enterprise account): it resets
 * daily on Free and at the renewal on a paid plan, and the facts here carry no plan.
 */
export const insufficientBalance = () =>
  new DomainError(
    'insufficient_balance',
    'conflict',
    'the CU balance is empty: top up (or wait for your plan allowance to reset) and resume again',
  );

export const planRequiredError = () =>
  new DomainError(
    'plan_required',
    'forbidden',
    'a team account needs a plan to create or resume webhooks or change their filters',
  );

/**
 * The refusal of a write that a cap (`cap_…`) refuses: for a team account without a plan it is
 * 403 plan_required instead (the caps of no plan are 0: the missing plan is the cause). Other
 * refusals, and every write of an account with a plan, stay as they are.
 */
export function refusalWithoutPlan(planRequired: boolean, error: unknown): unknown {
  return planRequired && error instanceof DomainError && error.code.startsWith('cap_')
    ? planRequiredError()
    : error;
}

function requireFit(facts: TransitionFacts): DomainError | null {
  const fit = facts.planFit;
  if (fit === undefined) throw new Error('planFit is required for this trigger');
  return fit.fits ? null : fit.error;
}

/**
 * One row of the table: the status after `trigger` from `from` (null = not yet created), or the
 * refusal the API answers. `unchanged` is an idempotent repeat (pause of a paused webhook) or a
 * trigger that does not apply to the status (a plan change never touches an owner pause).
 */
export function transition(
  from: WebhookStatus | null,
  trigger: StatusTrigger,
  facts: TransitionFacts = {},
): TransitionResult {
  if (trigger === 'create') {
    if (from !== null) throw new Error('create applies to a new webhook only');
    if (facts.planRequired) return refused(planRequiredError());
    const over = requireFit(facts);
    return over ? refused(over) : change(null, 'active');
  }
  if (from === null) throw new Error(`${trigger} needs an existing webhook`);
  if (from === 'deleted') return refused(webhookNotFound());
  switch (trigger) {
    case 'owner_delete':
      return change(from, 'deleted');
    case 'owner_pause':
      // Over a service pause this becomes an owner pause: no upgrade or top-up undoes it.
      return from === 'paused' ? unchanged(from) : change(from, 'paused');
    case 'owner_resume': {
      // Already active: nothing to resume, whatever the balance (an idempotent repeat).
      if (from === 'active') return unchanged(from);
      // The missing plan first: the spec's create row answers a team without a plan 403
      // plan_required, and an empty balance or a cap of 0 would hide that cause (QA).
      if (facts.planRequired) return refused(planRequiredError());
      // The spec's endpoint table refuses a resume at an empty balance from every paused status,
      // not only paused_no_balance (README "Statuses"); the balance is judged before the plan.
      const balance = facts.balance;
      if (balance === undefined) throw new Error('balance facts are required for a resume');
      // Rule 2: a resume while a top-up clears is accepted; deliveries begin when it clears.
      if (balance.exhausted && !balance.topUpClearing) return refused(insufficientBalance());
      const over = requireFit(facts);
      return over ? refused(over) : change(from, 'active');
    }
    case 'plan_change': {
      const over = requireFit(facts);
      if (from === 'active' && over) return change(from, 'paused_plan');
      if (from === 'paused_plan' && !over) return change(from, 'active');
      return unchanged(from);
    }
    case 'auto_pause':
      return from === 'active' ? change(from, 'paused_auto') : unchanged(from);
    case 'no_balance':
      return from === 'active' ? change(from, 'paused_no_balance') : unchanged(from);
  }
}

/** Durations of the service decisions (spec: 30 minutes each, at least 20 attempts). */
export interface ServiceDecisionSettings {
  readonly autoPauseAfterMs: number;
  readonly autoPauseMinAttempts: number;
  readonly noBalancePauseAfterMs: number;
}

export const DEFAULT_SERVICE_DECISIONS: ServiceDecisionSettings = Object.freeze({
  autoPauseAfterMs: 30 * 60_000,
  autoPauseMinAttempts: 20,
  noBalancePauseAfterMs: 30 * 60_000,
});

/** Delivery health of one webhook as delivery-worker's outcomes describe it. */
export interface DeliveryHealthFacts {
  /** Start of the current unbroken run of failed attempts; null after any success. */
  readonly failingSince: Date | null;
  /** Attempts (made or skipped by the breaker) since failingSince. */
  readonly attemptsSinceFailing: number;
  readonly now: Date;
}

/** Spec: 30 minutes of failing deliveries with at least 20 attempts → paused_auto. */
export function shouldAutoPause(
  facts: DeliveryHealthFacts,
  settings = DEFAULT_SERVICE_DECISIONS,
): boolean {
  return (
    facts.failingSince !== null &&
    facts.now.getTime() - facts.failingSince.getTime() >= settings.autoPauseAfterMs &&
    facts.attemptsSinceFailing >= settings.autoPauseMinAttempts
  );
}

export interface NoBalanceFacts {
  /** When the account's balance reached zero (billing's exhaustedSince); null while ok. */
  readonly exhaustedSince: Date | null;
  /** The webhook has events waiting to be delivered. */
  readonly hasEventsToDeliver: boolean;
  readonly now: Date;
}

/** Spec: 30 minutes at zero CU balance with events to deliver → paused_no_balance. */
export function shouldPauseForNoBalance(
  facts: NoBalanceFacts,
  settings = DEFAULT_SERVICE_DECISIONS,
): boolean {
  return (
    facts.hasEventsToDeliver &&
    facts.exhaustedSince !== null &&
    facts.now.getTime() - facts.exhaustedSince.getTime() >= settings.noBalancePauseAfterMs
  );
}

import { DomainError } from '@meridian/errors';
import {
  balanceForResume,
  dropReasonOf,
  insufficientBalance,
  queuedEventDropReason,
  refusalWithoutPlan,
  shouldAutoPause,
  shouldPauseForNoBalance,
  statusLabel,
  transition,
  type StatusTrigger,
  type TransitionFacts,
  type WebhookStatus,
} from './status-machine';

const fits = { planFit: { fits: true } } as const;
const over = {
  planFit: { fits: false, error: new DomainError('cap_active_webhooks_exceeded', 'conflict') },
} as const;
const empty = { balance: { exhausted: true, topUpClearing: false } };
const clearing = { balance: { exhausted: true, topUpClearing: true } };
const funded = { balance: { exhausted: false, topUpClearing: false } };

const outcome = (
  from: WebhookStatus | null,
  trigger: StatusTrigger,
  facts: TransitionFacts,
): string => {
  const r = transition(from, trigger, facts);
  if (r.kind === 'change') return `${r.to}${r.dropReason ? ` (drop ${r.dropReason})` : ''}`;
  if (r.kind === 'unchanged') return 'unchanged';
  return `refused ${r.error.code}`;
};

describe('transition: every row of the spec table', () => {
  it.each<[WebhookStatus | null, StatusTrigger, TransitionFacts, string]>([
    [null, 'create', fits, 'active'],
    [null, 'create', { ...fits, planRequired: true }, 'refused plan_required'],
    [null, 'create', over, 'refused cap_active_webhooks_exceeded'],
    ['active', 'owner_pause', {}, 'paused (drop owner_paused)'],
    ['paused', 'owner_resume', { ...fits, ...funded }, 'active'],
    ['active', 'auto_pause', {}, 'paused_auto (drop auto_paused)'],
    ['paused_auto', 'owner_resume', { ...fits, ...funded }, 'active'],
    ['active', 'plan_change', over, 'paused_plan (drop plan_paused)'],
    ['active', 'plan_change', fits, 'unchanged'],
    ['paused_plan', 'plan_change', fits, 'active'],
    ['paused_plan', 'plan_change', over, 'unchanged'],
    ['paused_plan', 'owner_resume', { ...fits, ...funded }, 'active'],
    ['paused_plan', 'owner_resume', { ...over, ...funded }, 'refused cap_active_webhooks_exceeded'],
    ['active', 'no_balance', {}, 'paused_no_balance (drop no_balance)'],
    ['paused_no_balance', 'owner_resume', { ...fits, ...funded }, 'active'],
    ['paused_no_balance', 'owner_resume', { ...fits, ...clearing }, 'active'],
    ['paused_no_balance', 'owner_resume', { ...fits, ...empty }, 'refused insufficient_balance'],
    // Endpoint table: resume "refused with 409 insufficient_balance when the balance is empty",
    // from every paused status; rule 2's clearing top-up lets it through from each of them.
    ...((['paused', 'paused_auto', 'paused_plan'] as const).flatMap((s) => [
      [s, 'owner_resume', { ...fits, ...empty }, 'refused insufficient_balance'],
      [s, 'owner_resume', { ...fits, ...clearing }, 'active'],
    ]) as Array<[WebhookStatus, StatusTrigger, TransitionFacts, string]>),
    // The balance is judged first: an empty balance is the refusal even over a cap.
    ['paused_plan', 'owner_resume', { ...over, ...empty }, 'refused insufficient_balance'],
    [
      'paused_plan',
      'owner_resume',
      { ...over, ...clearing },
      'refused cap_active_webhooks_exceeded',
    ],
    ['active', 'owner_resume', { ...fits, ...empty }, 'unchanged'],
    // A team without a plan (QA: its paused_plan resume was told insufficient_balance): the
    // create row's 403 plan_required, judged before the balance and the plan fit, from every
    // paused status.
    ...((['paused', 'paused_auto', 'paused_plan', 'paused_no_balance'] as const).flatMap((s) => [
      [s, 'owner_resume', { ...over, ...empty, planRequired: true }, 'refused plan_required'],
      [s, 'owner_resume', { ...fits, ...funded, planRequired: true }, 'refused plan_required'],
    ]) as Array<[WebhookStatus, StatusTrigger, TransitionFacts, string]>),
    ['active', 'owner_resume', { ...fits, ...empty, planRequired: true }, 'unchanged'],
    ['paused_auto', 'owner_pause', {}, 'paused (drop owner_paused)'],
    ['paused_plan', 'owner_pause', {}, 'paused (drop owner_paused)'],
    ['paused_no_balance', 'owner_pause', {}, 'paused (drop owner_paused)'],
    // An owner pause is never undone by the service: no plan change, no top-up resumes it.
    ['paused', 'plan_change', fits, 'unchanged'],
    ['paused_no_balance', 'plan_change', fits, 'unchanged'],
    ['paused_auto', 'plan_change', fits, 'unchanged'],
    ...(['active', 'paused', 'paused_auto', 'paused_plan', 'paused_no_balance'] as const).map(
      (s) =>
        [s, 'owner_delete', {}, 'deleted (drop deleted)'] as [
          WebhookStatus,
          StatusTrigger,
          TransitionFacts,
          string,
        ],
    ),
    ['deleted', 'owner_resume', { ...fits, ...empty }, 'refused not_found'],
    ['deleted', 'owner_delete', {}, 'refused not_found'],
    ['paused', 'owner_pause', {}, 'unchanged'],
    ['active', 'owner_resume', fits, 'unchanged'],
    ['paused', 'auto_pause', {}, 'unchanged'],
    ['paused_plan', 'no_balance', {}, 'unchanged'],
  ])('%s + %s → case %#', (from, trigger, facts, expected) => {
    expect(outcome(from, trigger, facts)).toBe(expected);
  });

  it.each(['paused', 'paused_auto', 'paused_plan', 'paused_no_balance'] as const)(
    'a resume of %s without balance facts is a programming error, never a silent accept',
    (from) => {
      expect(() => transition(from, 'owner_resume', fits)).toThrow(/balance facts/);
    },
  );

  it.each([
    // [allowance, purchased, pending, accepted]: the resume at an exhausted balance is accepted
    // only when the pending top-ups leave CU to spend once they clear (rule 2).
    [0, 0, 100, true],
    [0, -970_000, 100, false], // QA: the top-up only pays part of the overdraft
    [0, -970_000, 970_000, false], // pays it exactly: still nothing to spend
    [0, -970_000, 970_001, true],
    [0, 0, 0, false],
  ])(
    'balanceForResume: allowance %i, purchased %i, pending %i → accepted %s',
    (allowanceCu, purchasedCu, pendingTopUpCu, accepted) => {
      const balance = balanceForResume({
        exhausted: true,
        allowanceCu,
        purchasedCu,
        pendingTopUpCu,
      });
      const result = transition('paused', 'owner_resume', { ...fits, balance });
      expect(result.kind === 'change').toBe(accepted);
    },
  );

  it('refusalWithoutPlan: a cap refusal of a team without a plan is 403 plan_required', () => {
    const cap = new DomainError('cap_addresses_exceeded', 'conflict');
    const other = new DomainError('unknown_address_list', 'invalid');
    expect(refusalWithoutPlan(true, cap)).toMatchObject({
      code: 'plan_required',
      kind: 'forbidden',
    });
    expect(refusalWithoutPlan(false, cap)).toBe(cap);
    expect(refusalWithoutPlan(true, other)).toBe(other);
  });

  it('labels are the dashboard column; drop reasons follow the status', () => {
    expect(statusLabel('paused_plan')).toBe('Paused: over plan limits');
    expect(statusLabel('deleted')).toBeNull();
    expect(dropReasonOf('active')).toBeNull();
    expect(dropReasonOf('paused_auto')).toBe('auto_paused');
  });
});

describe('service decisions', () => {
  const t0 = new Date('2026-05-01T00:00:00Z');
  const at = (ms: number) => new Date(t0.getTime() + ms);
  const MIN = 60_000;

  it.each([
    [t0, 20, at(30 * MIN), true],
    [t0, 19, at(30 * MIN), false],
    [t0, 500, at(30 * MIN - 1), false],
    [null, 500, at(60 * MIN), false],
  ])(
    'auto-pause: failing since %s, %i attempts, now %s → %s',
    (failingSince, attempts, now, expected) => {
      expect(shouldAutoPause({ failingSince, attemptsSinceFailing: attempts, now })).toBe(expected);
    },
  );

  it('honours configured durations', () => {
    const settings = { autoPauseAfterMs: MIN, autoPauseMinAttempts: 2, noBalancePauseAfterMs: MIN };
    expect(
      shouldAutoPause({ failingSince: t0, attemptsSinceFailing: 2, now: at(MIN) }, settings),
    ).toBe(true);
    expect(
      shouldPauseForNoBalance(
        { exhaustedSince: t0, hasEventsToDeliver: true, now: at(MIN) },
        settings,
      ),
    ).toBe(true);
  });

  it.each([
    [t0, true, at(30 * MIN), true],
    [t0, false, at(30 * MIN), false],
    [t0, true, at(30 * MIN - 1), false],
    [null, true, at(60 * MIN), false],
  ])(
    'no balance: exhausted since %s, events %s, now %s → %s',
    (exhaustedSince, events, now, expected) => {
      expect(shouldPauseForNoBalance({ exhaustedSince, hasEventsToDeliver: events, now })).toBe(
        expected,
      );
    },
  );
});

describe('queuedEventDropReason: a pause drops the events queued before it, resumed or not', () => {
  const at = (time: string) => new Date(`2026-03-01T00:${time}.000Z`);
  // QA "flip": attempts 1 and 2 failed at 13:20 and 13:25, paused 13:27, resumed 13:28.
  const queued = at('13:19');
  const resumed = { at: at('13:28'), from: 'paused' } as const;

  it('active, queued before the latest resume: dropped with the reason of the status it left', () => {
    expect(queuedEventDropReason('active', queued, resumed)).toBe('owner_paused');
    expect(queuedEventDropReason('active', queued, { ...resumed, from: 'paused_plan' })).toBe(
      'plan_paused',
    );
    expect(queuedEventDropReason('active', queued, { ...resumed, from: 'paused_auto' })).toBe(
      'auto_paused',
    );
    expect(queuedEventDropReason('active', queued, { ...resumed, from: 'paused_no_balance' })).toBe(
      'no_balance',
    );
  });

  it('active, queued at or after the resume, or never paused: delivered', () => {
    expect(queuedEventDropReason('active', at('13:28'), resumed)).toBeNull();
    expect(queuedEventDropReason('active', at('13:40'), resumed)).toBeNull();
    expect(queuedEventDropReason('active', queued)).toBeNull();
  });

  it('not active: the current status decides, as dropReasonOf', () => {
    for (const status of ['paused', 'paused_auto', 'paused_plan', 'deleted'] as const) {
      expect(queuedEventDropReason(status, queued, resumed)).toBe(dropReasonOf(status));
      expect(queuedEventDropReason(status, at('13:40'), resumed)).toBe(dropReasonOf(status));
    }
  });
});

describe('insufficientBalance', () => {
  it('names no daily allowance: a paid plan resets its allowance at the renewal (QA: Enterprise)', () => {
    const message = insufficientBalance().message;
    expect(message).not.toMatch(/daily/);
    expect(message).toMatch(/top up/);
    expect(message).toMatch(/allowance to reset/);
  });
});

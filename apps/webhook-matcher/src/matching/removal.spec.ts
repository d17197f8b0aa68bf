import type { Phase } from '@meridian/webhooks';
import type { StoredEvent } from './matching.repository';
import { phasesPublishedBefore, receivesRemoval } from './removal';

const BOTH: Phase[] = ['unconfirmed', 'confirmed'];
const UNCONFIRMED: Phase[] = ['unconfirmed'];
const CONFIRMED: Phase[] = ['confirmed'];

describe('receivesRemoval (who is told a reorg undid an event)', () => {
  it.each<[string, Phase[], StoredEvent['state'], boolean]>([
    ['both phases, confirmation pending', BOTH, 'pending', true],
    ['both phases, confirmed', BOTH, 'confirmed', true],
    ['both phases, dropped by the budget (never received)', BOTH, 'done', true],
    ['unconfirmed only', UNCONFIRMED, 'done', true],
    ['confirmed only, its confirmed delivery published', CONFIRMED, 'confirmed', true],
    [
      'confirmed only, confirmation still pending: cancelled, nothing sent',
      CONFIRMED,
      'pending',
      false,
    ],
    ['confirmed only, dropped by the budget: owed nothing', CONFIRMED, 'done', false],
    ['an occurrence removed before (a block leaving twice)', BOTH, 'removed', false],
    ['confirmed only, removed before', CONFIRMED, 'removed', false],
  ])('%s', (_name, phases, state, expected) => {
    expect(receivesRemoval({ phases, state })).toBe(expected);
  });
});

describe('phasesPublishedBefore (the earlier deliveries a job names, so the worker waits only for those)', () => {
  type Event = Pick<StoredEvent, 'phases' | 'state' | 'dropped'>;
  const event = (phases: Phase[], state: StoredEvent['state'], dropped = false): Event => ({
    phases,
    state,
    dropped,
  });
  it.each<[string, Event, 'unconfirmed' | 'confirmed' | 'removed', string[]]>([
    ['unconfirmed: none', event(BOTH, 'pending'), 'unconfirmed', []],
    ['confirmed after unconfirmed', event(BOTH, 'pending'), 'confirmed', ['unconfirmed']],
    ['confirmed of a confirmed-only webhook', event(CONFIRMED, 'pending'), 'confirmed', []],
    [
      'removed before its confirmation (cancelled): unconfirmed only',
      event(BOTH, 'pending'),
      'removed',
      ['unconfirmed'],
    ],
    ['removed after both', event(BOTH, 'confirmed'), 'removed', ['unconfirmed', 'confirmed']],
    ['removed of an event the budget dropped', event(BOTH, 'done', true), 'removed', []],
    [
      'removed of an unconfirmed-only webhook',
      event(UNCONFIRMED, 'done'),
      'removed',
      ['unconfirmed'],
    ],
    [
      'removed of a confirmed-only webhook',
      event(CONFIRMED, 'confirmed'),
      'removed',
      ['confirmed'],
    ],
  ])('%s', (_name, e, phase, expected) => {
    expect(phasesPublishedBefore(e, phase)).toEqual(expected);
  });
});

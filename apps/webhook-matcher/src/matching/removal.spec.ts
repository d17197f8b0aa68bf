import type { Phase } from '@meridian/webhooks';
import type { StoredEvent } from './matching.repository';
import { receivesRemoval } from './removal';

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

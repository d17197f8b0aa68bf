import { eventIdOf, type EventKey } from '@meridian/webhooks';
import { occurrenceOf } from './occurrence';

const KEY: EventKey = {
  network: 'opbnb-mainnet',
  blockHash: '0x' + '22'.repeat(32),
  txHash: '0x' + '11'.repeat(32),
  logIndex: null,
};
const ID = [0, 1, 2].map((occurrence) => eventIdOf({ ...KEY, occurrence }));
type State = 'pending' | 'confirmed' | 'removed' | 'done';
const rows = (...states: State[]) =>
  new Map(states.map((state, i) => [`wh_1:${ID[i]}`, { state }] as const));

describe('occurrenceOf (a block that comes back after a reorg)', () => {
  it.each([
    ['never seen: the first occurrence', rows(), ID[0]],
    ['recorded and pending: a redelivery, nothing new', rows('pending'), null],
    ['recorded and settled: a redelivery, nothing new', rows('done'), null],
    ['the first occurrence removed: the second', rows('removed'), ID[1]],
    [
      'the second recorded after the first was removed: a redelivery',
      rows('removed', 'confirmed'),
      null,
    ],
    ['removed twice: the third', rows('removed', 'removed'), ID[2]],
  ] as const)('%s', (_name, known, expected) => {
    expect(occurrenceOf('wh_1', ID[0]!, KEY, known)).toBe(expected);
  });

  it('reads only the rows of its own webhook', () => {
    const known = new Map([[`wh_2:${ID[0]}`, { state: 'removed' as const }]]);
    expect(occurrenceOf('wh_1', ID[0]!, KEY, known)).toBe(ID[0]);
  });
});

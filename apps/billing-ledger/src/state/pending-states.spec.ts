import type { BalanceRow } from '../ledger/ledger.repository';
import { PendingStates } from './pending-states';

const row = (accountId: string, version: number, allowance = 100) =>
  ({ accountId, version, allowance }) as BalanceRow;

describe('PendingStates', () => {
  it('coalesces the changes of an account into its latest version', () => {
    const pending = new PendingStates();
    pending.add([row('a', 2, 90), row('b', 5)]);
    pending.add([row('a', 4, 70)]);
    pending.add([row('a', 3, 80)]); // late notification of an older commit: ignored
    expect(pending.size).toBe(2);
    const taken = pending.take(10);
    expect(taken.map((r) => [r.accountId, r.version, r.allowance])).toEqual([
      ['a', 4, 70],
      ['b', 5, 100],
    ]);
    expect(pending.size).toBe(0);
  });

  it('takes in batches and keeps a copy (later mutation of the source row is not seen)', () => {
    const pending = new PendingStates();
    const source = row('a', 1);
    pending.add([source, row('b', 1), row('c', 1)]);
    source.allowance = 0;
    expect(pending.take(2).map((r) => r.accountId)).toEqual(['a', 'b']);
    expect(pending.has('c')).toBe(true);
    expect(pending.take(2).map((r) => r.accountId)).toEqual(['c']);
  });

  it('puts back failed rows unless a newer version arrived meanwhile', () => {
    const pending = new PendingStates();
    pending.add([row('a', 1), row('b', 1)]);
    const failed = pending.take(10);
    pending.add([row('a', 2)]);
    pending.add(failed);
    expect(
      pending
        .take(10)
        .map((r) => `${r.accountId}@${r.version}`)
        .sort(),
    ).toEqual(['a@2', 'b@1']);
  });

  it('keeps an owed event with the account until its row is taken, also across coalescing and a failed try', () => {
    const pending = new PendingStates();
    pending.add([row('a', 1), row('b', 1)], new Set(['a']));
    pending.add([row('a', 2)]); // a later charge that flips nothing: the event is still owed
    const rows = pending.take(10);
    const owed = pending.takeAnnounced(rows);
    expect([...owed]).toEqual(['a']);
    pending.add(rows, owed); // the try failed: put back with the debt
    const again = pending.take(10);
    expect([...pending.takeAnnounced(again)]).toEqual(['a']);
    expect([...pending.takeAnnounced(again)]).toEqual([]);
  });

  it('takes the rows that owe an event (a flip) before the others, however late they came', () => {
    const pending = new PendingStates();
    pending.add(Array.from({ length: 5 }, (_, i) => row(`r${i}`, 1)));
    pending.add([row('flip', 2), row('r5', 1)], new Set(['flip']));
    const first = pending.take(2);
    expect(first.map((r) => r.accountId)).toEqual(['flip', 'r0']);
    expect([...pending.takeAnnounced(first)]).toEqual(['flip']);
    expect(pending.take(10).map((r) => r.accountId)).toEqual(['r1', 'r2', 'r3', 'r4', 'r5']);
  });
});

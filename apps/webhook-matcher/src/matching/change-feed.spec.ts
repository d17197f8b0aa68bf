import { ChangeFeedCursor, GAP_TIMEOUT_MS } from './change-feed';
import type { ChangeRow } from './matching.repository';

const row = (seq: number, settled = true, ageMs = 0): ChangeRow => ({
  seq,
  accountId: 'acc_1',
  webhookId: `wh_${seq}`,
  listId: null,
  settled,
  ageMs,
});

describe('ChangeFeedCursor', () => {
  it('passes contiguous rows and applies each once', () => {
    const cursor = new ChangeFeedCursor(0);
    expect(cursor.accept([row(1), row(2)]).map((r) => r.seq)).toEqual([1, 2]);
    expect(cursor.position).toBe(2);
    expect(cursor.accept([row(3)]).map((r) => r.seq)).toEqual([3]);
  });

  it('does not pass a hole a later commit may still fill, and applies the late row', () => {
    const cursor = new ChangeFeedCursor(0);
    // seq 2 was taken by a transaction that has not committed yet; 3 committed first.
    expect(cursor.accept([row(1), row(3)]).map((r) => r.seq)).toEqual([1, 3]);
    expect(cursor.position).toBe(1);
    expect(cursor.accept([row(3)])).toEqual([]);
    expect(cursor.accept([row(2), row(3)]).map((r) => r.seq)).toEqual([2]);
    expect(cursor.position).toBe(3);
  });

  it('skips a hole left by a rollback once the rows above it are settled and old', () => {
    const cursor = new ChangeFeedCursor(0);
    cursor.accept([row(2, true, 10)]);
    expect(cursor.position).toBe(0);
    cursor.accept([row(2, false, GAP_TIMEOUT_MS + 1)]);
    expect(cursor.position).toBe(0);
    cursor.accept([row(2, true, GAP_TIMEOUT_MS + 1)]);
    expect(cursor.position).toBe(2);
  });
});

import { MARK_BY_TICK_AFTER_MS, PublishedMarks } from './published-marks';

describe('PublishedMarks (ADR 0106)', () => {
  it('keeps the newest version put per account and hands it to a save, 0 for none', () => {
    const marks = new PublishedMarks();
    marks.put([{ accountId: 'a', version: 3 }], 1_000);
    marks.put([{ accountId: 'a', version: 2 }], 2_000); // an older put never wins
    expect(marks.forSave(['b', 'a'])).toEqual([0, 3]);
    marks.put([{ accountId: 'a', version: 4 }], 3_000);
    expect(marks.versionOf('a')).toBe(4);
  });

  it('drops a mark once written at its version or later, not when a newer one was put since', () => {
    const marks = new PublishedMarks();
    marks.put(
      [
        { accountId: 'a', version: 3 },
        { accountId: 'b', version: 7 },
      ],
      0,
    );
    // A usage transaction wrote a's 3 and b's 6 while b's 7 was being put.
    marks.marked([
      { accountId: 'a', version: 3 },
      { accountId: 'b', version: 6 },
    ]);
    expect(marks.all()).toEqual([{ accountId: 'b', version: 7 }]);
  });

  it('leaves a mark to the publisher only once it has waited MARK_BY_TICK_AFTER_MS', () => {
    const marks = new PublishedMarks();
    marks.put([{ accountId: 'a', version: 5 }], 10_000);
    expect(marks.dueForPublisher('a', 5, 10_000 + MARK_BY_TICK_AFTER_MS - 1)).toBe(false);
    expect(marks.dueForPublisher('a', 5, 10_000 + MARK_BY_TICK_AFTER_MS)).toBe(true);
    // A version newer than the one in KV is not this mark's to write.
    expect(marks.dueForPublisher('a', 6, 10_000 + MARK_BY_TICK_AFTER_MS)).toBe(false);
    expect(marks.dueForPublisher('b', 1, 10_000 + MARK_BY_TICK_AFTER_MS)).toBe(false);
  });
});

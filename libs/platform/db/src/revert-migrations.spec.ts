import { parseRevertArguments, planRevert, RevertRefused } from './revert-migrations';

describe('parseRevertArguments', () => {
  it.each([
    [[], { count: 1 }],
    [['--count', '3'], { count: 3 }],
    [['--to', 'EventAttempts1765200000000'], { to: 'EventAttempts1765200000000' }],
  ])('%j → %j', (args, request) => {
    expect(parseRevertArguments(args)).toEqual(request);
  });

  it.each([
    [['--count'], /bad arguments "--count"; usage: revert \[--count N \| --to <migration name>\]/],
    [['--count', '0'], /--count takes a whole number from 1 to 9999, not "0"/],
    [['--count', '-1'], /not "-1"/],
    [['--count', '2.5'], /not "2.5"/],
    [['--count', '1e3'], /not "1e3"/],
    [['--count', '10000'], /not "10000"/],
    [['--to', ''], /--to takes a migration's name, not ""/],
    [['--to', 'a;DROP'], /not "a;DROP"/],
    [['--all'], /bad arguments "--all"/],
    [['3'], /bad arguments "3"/],
    [['--count', '1', '--to', 'X'], /bad arguments "--count 1 --to X"/],
  ])('%j refused', (args, message) => {
    const refuse = () => parseRevertArguments(args);
    expect(refuse).toThrow(RevertRefused);
    expect(refuse).toThrow(message);
  });
});

describe('planRevert', () => {
  const applied = ['C3', 'B2', 'A1']; // newest first, as the migrations table's ids say
  const known = new Set(['A1', 'B2', 'C3']);

  it.each([
    [{ count: 1 }, ['C3']],
    [{ count: 3 }, ['C3', 'B2', 'A1']],
    [{ to: 'A1' }, ['C3', 'B2']],
    [{ to: 'C3' }, []],
  ])('%j reverts %j, newest first', (request, plan) => {
    expect(planRevert(applied, known, request)).toEqual(plan);
  });

  it('refuses to revert past what is applied, naming what is', () => {
    expect(() => planRevert(applied, known, { count: 4 })).toThrow(
      'asked to revert 4, but 3 applied (newest first: C3, B2, A1)',
    );
    expect(() => planRevert([], known, { count: 1 })).toThrow(
      'asked to revert 1, but 0 applied (newest first: none)',
    );
  });

  it('refuses a --to that is not applied, or that this image does not know', () => {
    expect(() => planRevert(['B2', 'A1'], known, { to: 'C3' })).toThrow(
      'C3 is not applied (applied, newest first: B2, A1)',
    );
    expect(() => planRevert(applied, known, { to: 'Z9' })).toThrow(
      'this image has no migration "Z9" (applied, newest first: C3, B2, A1)',
    );
  });

  it("refuses a migration applied by another release's image, whose down() it lacks", () => {
    expect(() => planRevert(['D4', ...applied], known, { count: 2 })).toThrow(
      'D4 was applied by another release: revert it with the image that holds it',
    );
    // Reverting only what it holds, below the foreign one, is refused too: D4 is the last.
    expect(() => planRevert(['D4', ...applied], known, { to: 'A1' })).toThrow(/D4 was applied/);
  });
});

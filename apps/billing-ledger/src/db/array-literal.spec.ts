import { numberArray, textArray } from './array-literal';

describe('Postgres array literals (set-based statement parameters)', () => {
  it('writes numbers and nulls as one literal', () => {
    expect(numberArray([])).toBe('{}');
    expect(numberArray([1, -2, 0, 9_007_199_254_740_991, null])).toBe(
      '{1,-2,0,9007199254740991,NULL}',
    );
  });

  it('refuses what is not a finite number', () => {
    expect(() => numberArray([1, Number.NaN])).toThrow(RangeError);
    expect(() => numberArray([Number.POSITIVE_INFINITY])).toThrow(RangeError);
  });

  it('writes plain tokens bare and quotes everything else', () => {
    expect(textArray([])).toBe('{}');
    expect(textArray(['acc_1-x', '2026-01-01T00:00:00.000Z', null])).toBe(
      '{acc_1-x,2026-01-01T00:00:00.000Z,NULL}',
    );
    expect(textArray(['NULL', 'null', '', 'a b', 'a,b', '{x}', 'q"\\', 'é'])).toBe(
      '{"NULL","null","","a b","a,b","{x}","q\\"\\\\","é"}',
    );
  });
});

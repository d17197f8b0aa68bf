import { DomainError } from '@meridian/errors';
import { checkIfMatch, etagOf, parseIfMatch } from './if-match';

const refusal = (run: () => unknown): DomainError => {
  try {
    run();
  } catch (error) {
    return error as DomainError;
  }
  throw new Error('not refused');
};

describe('If-Match (RFC 9110 §13.1.1) on a webhook', () => {
  it('the ETag is the version, strong and quoted', () => {
    expect(etagOf(7)).toBe('"7"');
  });

  it.each([
    [undefined, null],
    ['*', { any: true }],
    [' * ', { any: true }],
    ['"3"', { any: false, tags: ['3'] }],
    ['"3", "4"', { any: false, tags: ['3', '4'] }],
    ['"3",,\t"4" ,', { any: false, tags: ['3', '4'] }],
    [['"3"', '"5"'], { any: false, tags: ['3', '5'] }],
    ['W/"3"', { any: false, tags: [] }],
    ['W/"3", "4"', { any: false, tags: ['4'] }],
    ['"abc"', { any: false, tags: ['abc'] }],
    ['""', { any: false, tags: [''] }],
  ] as const)('%j reads as %j', (header, expected) => {
    expect(parseIfMatch(header as string | string[] | undefined)).toEqual(expected);
  });

  it.each(['', ' ', ',', '3', '"3', '3"', '"3" "4"', '*, "3"', 'w/"3"', '"a"b"', '"\u0001"'])(
    '%j is 400 invalid_if_match',
    (header) => {
      const error = refusal(() => parseIfMatch(header));
      expect(error).toBeInstanceOf(DomainError);
      expect(error.code).toBe('invalid_if_match');
      expect(error.kind).toBe('invalid');
      // The house form of a refused header (as platform-http's Idempotency-Key refusal).
      expect(error.details).toEqual({ location: 'headers', path: 'headers.if-match' });
    },
  );

  it('a header longer than 2048 characters is refused, not scanned', () => {
    expect(refusal(() => parseIfMatch(`"${'1'.repeat(3000)}"`)).code).toBe('invalid_if_match');
  });

  it('matches the current version, any of a list, or *; none: last write wins', () => {
    expect(() => checkIfMatch(null, 3)).not.toThrow();
    expect(() => checkIfMatch({ any: true }, 3)).not.toThrow();
    expect(() => checkIfMatch(parseIfMatch('"2", "3"'), 3)).not.toThrow();
  });

  it('another version is 412 version_mismatch naming both, with details.currentVersion', () => {
    const error = refusal(() => checkIfMatch(parseIfMatch('"2"'), 3));
    expect(error.code).toBe('version_mismatch');
    expect(error.kind).toBe('precondition_failed');
    expect(error.message).toMatch(/"2".*version 3/);
    expect(error.details).toEqual({ details: { currentVersion: 3 } });
    // A weak tag never matches, even of the current version.
    expect(refusal(() => checkIfMatch(parseIfMatch('W/"3"'), 3)).code).toBe('version_mismatch');
  });
});

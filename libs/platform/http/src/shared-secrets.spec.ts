import { authorizationOf, bearerOf, SharedSecrets } from './shared-secrets';

describe('bearerOf', () => {
  it.each([
    ['Bearer abc', 'abc'],
    ['bearer abc  ', 'abc'],
    ['Basic abc', undefined],
    ['Bearer a b', undefined],
    [`Bearer ${'x'.repeat(513)}`, undefined],
    [undefined, undefined],
    [['Bearer abc'], undefined],
  ])('%j → %j', (header, expected) => {
    expect(bearerOf(header)).toBe(expected);
  });
});

describe('authorizationOf: a header sent but unusable is no missing one (QA F5)', () => {
  it.each([
    [undefined, { kind: 'absent' }],
    ['', { kind: 'absent' }],
    ['   ', { kind: 'absent' }],
    ['Bearer abc', { kind: 'bearer', credential: 'abc' }],
    [`Bearer ${'x'.repeat(512)}`, { kind: 'bearer', credential: 'x'.repeat(512) }],
    ['Basic dXNlcjpwYXNz', { kind: 'unusable' }],
    [`Bearer ${'x'.repeat(513)}`, { kind: 'unusable' }],
    ['Bearer a b', { kind: 'unusable' }],
    ['Bearer', { kind: 'unusable' }],
    ['abc', { kind: 'unusable' }],
    [['Bearer abc', 'Bearer def'], { kind: 'unusable' }],
  ])('%j → %j', (header, expected) => {
    expect(authorizationOf(header)).toEqual(expected);
  });
});

describe('SharedSecrets', () => {
  const current = 'op_current_token_0123456789';
  const previous = 'op_previous_token_0123456789';

  it('accepts the current and the previous secret, nothing else', () => {
    const secrets = new SharedSecrets([current, previous]);
    expect(secrets.matches(current)).toBe(true);
    expect(secrets.matches(previous)).toBe(true);
    expect(secrets.matches('op_other_token_0123456789')).toBe(false);
    expect(secrets.matches(current.slice(0, -1))).toBe(false);
    expect(secrets.matches(undefined)).toBe(false);
  });

  it('skips unset values; with none set it refuses everyone', () => {
    expect(new SharedSecrets([current, undefined]).matches(current)).toBe(true);
    const none = new SharedSecrets([undefined, '']);
    expect(none.empty).toBe(true);
    expect(none.matches('')).toBe(false);
    expect(none.matches(current)).toBe(false);
  });
});

import { bearerOf, SharedSecrets } from './shared-secrets';

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

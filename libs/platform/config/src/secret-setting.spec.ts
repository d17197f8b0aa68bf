import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { ConfigError, parseConfig } from './load-config';
import {
  holdsPlaceholder,
  isSecretSetting,
  optionalTokenSetting,
  secretListSetting,
  secretSetting,
} from './secret-setting';

/** deploy/secrets/example's values, as a trial cluster gets them. */
const EXAMPLE_TOKEN = 'CHANGE-ME-operator-token-0000';
const EXAMPLE_KEY = 'Q0hBTkdFLU1FLXdlYmhvb2stc2VjcmV0cy1rZXktMzI=';

describe('holdsPlaceholder', () => {
  it.each([
    ['the example operator token', EXAMPLE_TOKEN],
    ['the mark in any case, anywhere', 'my-token-change-me-please'],
    ['the example key (base64 of the mark)', EXAMPLE_KEY],
    ['base64url', Buffer.from('xx?CHANGE-ME>>').toString('base64url')],
    ['base64 of the mark in lower case', Buffer.from('key change-me 123').toString('base64')],
    ['hex', Buffer.from('CHANGE-ME-0123456789').toString('hex')],
  ])('refuses %s', (_, value) => {
    expect(holdsPlaceholder(value)).toBe(true);
  });

  it.each([
    ['a random token', `op_${randomBytes(24).toString('hex')}`],
    ['a random 32-byte key', randomBytes(32).toString('base64')],
    ['a word that merely starts alike', 'change-management-token'],
    ['the letters inside a word', 'http://exchange-meridian.internal:8080/0123456789abcdef/'],
  ])('accepts %s', (_, value) => {
    expect(holdsPlaceholder(value)).toBe(false);
  });

  it('finds no mark in 10,000 random keys', () => {
    for (let i = 0; i < 10_000; i++)
      expect(holdsPlaceholder(randomBytes(32).toString('base64'))).toBe(false);
  });
});

describe('secretSetting', () => {
  const schema = z.object({
    TOKEN: secretSetting(z.string().min(16, 'must be at least 16 characters')),
    KEY: secretSetting(
      z.string().transform((value, ctx) => {
        const bytes = Buffer.from(value, 'base64');
        if (bytes.length !== 32) ctx.addIssue({ code: 'custom', message: 'must be 32 bytes' });
        return bytes;
      }),
    ).optional(),
  });
  const good = { TOKEN: 'a-real-token-0123456789', KEY: randomBytes(32).toString('base64') };

  it('refuses a placeholder with one line naming the variable', () => {
    expect(() => parseConfig(schema, { ...good, TOKEN: EXAMPLE_TOKEN })).toThrow(
      new ConfigError(
        'TOKEN',
        'is invalid: holds the placeholder CHANGE-ME; set a secret of your own',
      ),
    );
    expect(() => parseConfig(schema, { ...good, KEY: EXAMPLE_KEY })).toThrow(
      /^config error: KEY is invalid: holds the placeholder CHANGE-ME/,
    );
  });

  it('keeps the inner rule and its output', () => {
    expect(() => parseConfig(schema, { ...good, TOKEN: 'short' })).toThrow(
      /TOKEN is invalid: must be at least 16 characters/,
    );
    expect(() => parseConfig(schema, { TOKEN: good.TOKEN, KEY: 'AAAA' })).toThrow(
      /KEY is invalid: must be 32 bytes/,
    );
    const config = parseConfig(schema, good);
    expect(config.TOKEN).toBe(good.TOKEN);
    expect(config.KEY).toEqual(Buffer.from(good.KEY, 'base64'));
    expect(parseConfig(schema, { TOKEN: good.TOKEN }).KEY).toBeUndefined();
  });

  it('is recognisable, optional or not', () => {
    expect(isSecretSetting(schema.shape.TOKEN)).toBe(true);
    expect(isSecretSetting(schema.shape.KEY)).toBe(true);
    expect(isSecretSetting(z.string().min(16))).toBe(false);
  });
});

describe('secretListSetting', () => {
  const parseList = (value: string) =>
    value.split(',').map((item, index) => {
      if (item.trim().length < 16) throw new Error(`item ${index + 1} is shorter than 16`);
      return item.trim();
    });
  const schema = z.object({ KEYS: secretListSetting(parseList).optional() });
  const a = 'a-real-secret-0123456789';
  const b = 'another-real-secret-0123';

  it("reads the list with the given parser, and that parser's error names the item", () => {
    expect(parseConfig(schema, { KEYS: `${a}, ${b}` }).KEYS).toEqual([a, b]);
    expect(parseConfig(schema, {}).KEYS).toBeUndefined();
    expect(() => parseConfig(schema, { KEYS: `${a},short` })).toThrow(
      /KEYS is invalid: item 2 is shorter than 16/,
    );
  });

  it('refuses a placeholder in any item (an encoded one the whole text hides: by its position); the whole list is a secret', () => {
    // Base64 items one after another decode, as one text, out of step: the item check finds it.
    expect(() => parseConfig(schema, { KEYS: `${a}, ${EXAMPLE_KEY}` })).toThrow(
      /KEYS is invalid: (item 2 of the list )?holds the placeholder CHANGE-ME/,
    );
    const key = randomBytes(32).toString('base64');
    expect(() => parseConfig(schema, { KEYS: `${key},${EXAMPLE_KEY}` })).toThrow(
      /KEYS is invalid: item 2 of the list holds the placeholder CHANGE-ME/,
    );
    expect(() => parseConfig(schema, { KEYS: EXAMPLE_TOKEN })).toThrow(
      /KEYS is invalid: holds the placeholder CHANGE-ME/,
    );
    expect(isSecretSetting(schema.shape.KEYS)).toBe(true);
  });
});

describe('optionalTokenSetting', () => {
  const schema = z.object({ TOKEN_PREVIOUS: optionalTokenSetting() });

  it('takes a token of 16 characters or more; unset and empty are both no token', () => {
    expect(parseConfig(schema, { TOKEN_PREVIOUS: 'a-real-token-0123456789' }).TOKEN_PREVIOUS).toBe(
      'a-real-token-0123456789',
    );
    expect(parseConfig(schema, {}).TOKEN_PREVIOUS).toBeUndefined();
    expect(parseConfig(schema, { TOKEN_PREVIOUS: '' }).TOKEN_PREVIOUS).toBeUndefined();
  });

  it('refuses a short token and a placeholder; it is a secret', () => {
    expect(() => parseConfig(schema, { TOKEN_PREVIOUS: 'short' })).toThrow(
      /TOKEN_PREVIOUS is invalid: must be at least 16 characters/,
    );
    expect(() => parseConfig(schema, { TOKEN_PREVIOUS: EXAMPLE_TOKEN })).toThrow(
      /TOKEN_PREVIOUS is invalid: holds the placeholder CHANGE-ME/,
    );
    expect(isSecretSetting(schema.shape.TOKEN_PREVIOUS)).toBe(true);
  });
});

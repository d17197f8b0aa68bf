import { randomBytes } from 'node:crypto';
import { isSecretSetting, parseConfig } from '@meridian/platform-config';
import { z } from 'zod';
import { secretsKeySetting } from './secrets-key-setting';

describe('secretsKeySetting', () => {
  const schema = z.object({
    A_KEY: secretsKeySetting(),
    B_KEY: secretsKeySetting('must be 32 bytes, base64').optional(),
  });
  const key = randomBytes(32).toString('base64');

  it('takes a 32-byte base64 key as given, and is one of the secrets', () => {
    expect(parseConfig(schema, { A_KEY: key, B_KEY: key })).toEqual({ A_KEY: key, B_KEY: key });
    expect(isSecretSetting(schema.shape.A_KEY)).toBe(true);
    expect(isSecretSetting(schema.shape.B_KEY)).toBe(true);
  });

  it.each([
    [
      'a key of another length',
      { A_KEY: randomBytes(16).toString('base64') },
      /A_KEY.*must be 32 bytes, base64-encoded/,
    ],
    [
      'the message it is given',
      { A_KEY: key, B_KEY: 'short' },
      /B_KEY is invalid: must be 32 bytes, base64$/m,
    ],
    [
      'the placeholder, before the length',
      { A_KEY: Buffer.from('CHANGE-ME-webhook-secrets-key-32').toString('base64') },
      /A_KEY is invalid: holds the placeholder CHANGE-ME/,
    ],
  ])('refuses %s, naming the variable', (_, env, message) => {
    expect(() => parseConfig(schema, env)).toThrow(message);
  });
});

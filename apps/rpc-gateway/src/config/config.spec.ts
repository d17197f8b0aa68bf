import { parseConfig } from '@meridian/platform-config';
import { configSchema } from './config';

describe('FILTER_ID_KEY', () => {
  const env = { REGION: 'eu', HTTP_PORT: '8080' };
  const key = 'a'.repeat(32);

  it('is required with NODE_ENV=production, naming what it is for', () => {
    expect(() => parseConfig(configSchema, { ...env, NODE_ENV: 'production' })).toThrow(
      /FILTER_ID_KEY.*required with NODE_ENV=production.*filter not found/s,
    );
    expect(
      parseConfig(configSchema, { ...env, NODE_ENV: 'production', FILTER_ID_KEY: key })
        .FILTER_ID_KEY,
    ).toBe(key);
  });

  it('may be unset elsewhere (a random key per replica) and is at least 32 characters', () => {
    expect(parseConfig(configSchema, env).FILTER_ID_KEY).toBeUndefined();
    expect(() => parseConfig(configSchema, { ...env, FILTER_ID_KEY: 'short' })).toThrow(
      /FILTER_ID_KEY.*at least 32 characters/s,
    );
  });
});

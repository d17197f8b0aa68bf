import { z } from 'zod';
import { commonEnv } from './common-env';
import { ConfigError, parseConfig } from './load-config';

describe('DATABASE_URL', () => {
  const schema = z.object({ DATABASE_URL: commonEnv.DATABASE_URL });
  const parse = (DATABASE_URL: string) => parseConfig(schema, { DATABASE_URL }).DATABASE_URL;

  it('refuses the placeholder password of deploy/secrets/example, naming the variable', () => {
    for (const password of ['CHANGE-ME', 'change-me-2024', encodeURIComponent('x/CHANGE-ME')])
      expect(() => parse(`postgres://billing_ledger:${password}@postgres:5432/meridian`)).toThrow(
        new ConfigError(
          'DATABASE_URL',
          'is invalid: its password holds the placeholder CHANGE-ME; set a secret of your own',
        ),
      );
  });

  it('takes a real password, and names that merely look alike outside the password', () => {
    for (const url of [
      'postgres://app:s3cret-Passw0rd@db:5432/meridian',
      'postgres://app:pw@exchange-meridian.internal:5432/change-me',
      'postgresql://app@127.0.0.1/db',
    ])
      expect(parse(url)).toBe(url);
  });
});

describe('REQUEST_LOGS', () => {
  const schema = z.object({ REQUEST_LOGS: commonEnv.REQUEST_LOGS });
  const parse = (env: Record<string, string>) => parseConfig(schema, env).REQUEST_LOGS;

  it('is on unless set to false; anything else stops the app naming it', () => {
    expect(parse({})).toBe(true);
    expect(parse({ REQUEST_LOGS: 'true' })).toBe(true);
    expect(parse({ REQUEST_LOGS: 'false' })).toBe(false);
    expect(() => parse({ REQUEST_LOGS: 'off' })).toThrow(ConfigError);
    expect(() => parse({ REQUEST_LOGS: 'off' })).toThrow(/REQUEST_LOGS/);
  });
});

import { parseConfig } from '@meridian/platform-config';
import { configSchema } from './config';

describe('delivery-worker config', () => {
  const env = {
    DATABASE_URL: 'postgres://x@127.0.0.1/x',
    HTTP_PORT: '0',
    WEBHOOK_SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
  };

  it('keeps the attempt log 8 days by default, at least the 4 days a job may come back', () => {
    const config = parseConfig(configSchema, env);
    expect(config.ATTEMPT_LOG_RETENTION_DAYS).toBe(8);
    expect(config.ATTEMPT_LOG_PRUNE_MS).toBe(10_000);
    expect(
      parseConfig(configSchema, { ...env, ATTEMPT_LOG_RETENTION_DAYS: '4' })
        .ATTEMPT_LOG_RETENTION_DAYS,
    ).toBe(4);
    expect(() => parseConfig(configSchema, { ...env, ATTEMPT_LOG_RETENTION_DAYS: '3' })).toThrow(
      /ATTEMPT_LOG_RETENTION_DAYS.*at least 4 days/,
    );
  });

  it('caps one account at 64 attempts in flight by default; ACCOUNT_MAX_IN_FLIGHT is a positive integer', () => {
    expect(parseConfig(configSchema, env).ACCOUNT_MAX_IN_FLIGHT).toBe(64);
    expect(
      parseConfig(configSchema, { ...env, ACCOUNT_MAX_IN_FLIGHT: '16' }).ACCOUNT_MAX_IN_FLIGHT,
    ).toBe(16);
    for (const bad of ['0', '-1', '2.5', 'many'])
      expect(() => parseConfig(configSchema, { ...env, ACCOUNT_MAX_IN_FLIGHT: bad })).toThrow(
        /ACCOUNT_MAX_IN_FLIGHT/,
      );
  });
});

describe('delivery-worker config: the secrets key ring', () => {
  const env = {
    DATABASE_URL: 'postgres://x@127.0.0.1/x',
    HTTP_PORT: '0',
    WEBHOOK_SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
  };
  const previous = [Buffer.alloc(32, 1), Buffer.alloc(32, 2)];
  const placeholder = Buffer.from('CHANGE-ME-webhook-secrets-key-32').toString('base64');

  it('takes no previous keys, or a comma-separated list of 32-byte base64 keys', () => {
    expect(parseConfig(configSchema, env).WEBHOOK_SECRETS_PREVIOUS_KEYS).toBeUndefined();
    const list = previous.map((k) => k.toString('base64')).join(', ');
    expect(
      parseConfig(configSchema, { ...env, WEBHOOK_SECRETS_PREVIOUS_KEYS: list })
        .WEBHOOK_SECRETS_PREVIOUS_KEYS,
    ).toEqual(previous);
  });

  it('refuses a short key and a placeholder anywhere in the list, naming the variable', () => {
    const good = previous[0]!.toString('base64');
    expect(() =>
      parseConfig(configSchema, {
        ...env,
        WEBHOOK_SECRETS_PREVIOUS_KEYS: `${good},${Buffer.alloc(16).toString('base64')}`,
      }),
    ).toThrow(/WEBHOOK_SECRETS_PREVIOUS_KEYS.*key 2 of the list must be 32 bytes/);
    expect(() =>
      parseConfig(configSchema, { ...env, WEBHOOK_SECRETS_PREVIOUS_KEYS: placeholder }),
    ).toThrow(/WEBHOOK_SECRETS_PREVIOUS_KEYS.*placeholder CHANGE-ME/);
    expect(() =>
      parseConfig(configSchema, {
        ...env,
        WEBHOOK_SECRETS_PREVIOUS_KEYS: `${good}, ${placeholder}`,
      }),
    ).toThrow(/WEBHOOK_SECRETS_PREVIOUS_KEYS.*item 2 of the list holds the placeholder CHANGE-ME/);
  });
});

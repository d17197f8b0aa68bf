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
});

import { isSecretSetting, parseConfig } from '@meridian/platform-config';
import { parseSecretsKey, SecretKeyRing } from '@meridian/platform-secrets';
import { configSchema } from './config';

describe('webhook-matcher config: the secrets key ring', () => {
  const current = Buffer.alloc(32, 7);
  const env = {
    DATABASE_URL: 'postgres://x@127.0.0.1/x',
    HTTP_PORT: '0',
    WEBHOOK_SECRETS_KEY: current.toString('base64'),
  };
  const previous = [Buffer.alloc(32, 1), Buffer.alloc(32, 2)];

  it('declares the previous keys as a secret setting, optional', () => {
    expect(isSecretSetting(configSchema.shape.WEBHOOK_SECRETS_PREVIOUS_KEYS)).toBe(true);
    expect(parseConfig(configSchema, env).WEBHOOK_SECRETS_PREVIOUS_KEYS).toBeUndefined();
  });

  it('takes a comma-separated list of 32-byte base64 keys: the ring holds them after the current', () => {
    const list = previous.map((k) => k.toString('base64')).join(',');
    const config = parseConfig(configSchema, { ...env, WEBHOOK_SECRETS_PREVIOUS_KEYS: list });
    const ring = new SecretKeyRing(
      parseSecretsKey(config.WEBHOOK_SECRETS_KEY),
      config.WEBHOOK_SECRETS_PREVIOUS_KEYS,
    );
    expect(ring.keyIds).toEqual(
      [current, ...previous].map((k) => new SecretKeyRing(k).currentKeyId),
    );
  });
});

/** The same rule as every app that dials billing-ledger (`grpcTargetSetting`, QA VV). */
describe('webhook-matcher config: BILLING_GRPC_URL', () => {
  const env = {
    DATABASE_URL: 'postgres://x@127.0.0.1/x',
    HTTP_PORT: '0',
    WEBHOOK_SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
  };

  it.each(['http://billing-ledger:9090', 'billing-ledger', 'billing-ledger:0'])(
    'refuses %j at start in one line naming it',
    (value) => {
      expect(() => parseConfig(configSchema, { ...env, BILLING_GRPC_URL: value })).toThrow(
        'config error: BILLING_GRPC_URL is invalid: must be host:port (or dns:///host:port): no scheme such as http://, no path',
      );
    },
  );

  it('takes host:port', () => {
    expect(
      parseConfig(configSchema, { ...env, BILLING_GRPC_URL: 'billing-ledger:9090' }),
    ).toMatchObject({
      BILLING_GRPC_URL: 'billing-ledger:9090',
    });
  });
});

import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { z } from 'zod';
import { ConfigError, parseConfig } from './load-config';
import { isSecretSetting } from './secret-setting';

/**
 * Every app's secrets are declared with `secretSetting`, so each refuses the placeholders of
 * deploy/secrets/example at start. The schemas are loaded by path, as deploy's own contract test
 * does: a platform lib imports no app, but this checks that every app uses it. rpc-gateway's
 * token setting STATIC_ACCESS_TOKENS is a dev/test map, not a deployment secret.
 */
const EXAMPLE_TOKEN = 'CHANGE-ME-operator-token-0000';
const EXAMPLE_KEY = 'Q0hBTkdFLU1FLXdlYmhvb2stc2VjcmV0cy1rZXktMzI=';
const token = `op_${randomBytes(24).toString('hex')}`;
const key = randomBytes(32).toString('base64');

/** app → its secret variables, each with the example's kind of placeholder and a real value. */
const SECRETS: Record<string, Record<string, { placeholder: string; real: string }>> = {
  'audit-api': {
    AUDIT_RPC_URL: {
      placeholder: 'http://rpc-gateway-eu.meridian.svc.cluster.local:8080/CHANGE-ME-access-token/',
      real: 'http://rpc-gateway-eu:8080/0123456789abcdef0123456789abcdef/',
    },
    AUDIT_RPC_URLS: {
      placeholder: JSON.stringify({ ETH: 'http://gw:8080/change-me/' }),
      real: JSON.stringify({ ETH: 'http://gw:8080/0123456789abcdef/' }),
    },
  },
  'billing-ledger': {
    OPERATOR_TOKEN: { placeholder: EXAMPLE_TOKEN, real: token },
    OPERATOR_TOKEN_PREVIOUS: { placeholder: EXAMPLE_TOKEN, real: token },
  },
  'chain-indexer': {},
  dashboard: {
    OPERATOR_TOKEN: { placeholder: EXAMPLE_TOKEN, real: token },
    DASHBOARD_SECRETS_KEY: {
      placeholder: Buffer.from('CHANGE-ME-dashboard-secrets-key!').toString('base64'),
      real: key,
    },
    DASHBOARD_SECRETS_PREVIOUS_KEYS: {
      placeholder: Buffer.from('CHANGE-ME-dashboard-secrets-key!').toString('base64'),
      real: key,
    },
    OPERATOR_PASSWORD: { placeholder: 'change-me-password', real: 'a-long-real-password' },
  },
  'delivery-worker': {
    WEBHOOK_SECRETS_KEY: { placeholder: EXAMPLE_KEY, real: key },
    WEBHOOK_SECRETS_PREVIOUS_KEYS: { placeholder: EXAMPLE_KEY, real: key },
  },
  'rpc-gateway': {
    FILTER_ID_KEY: { placeholder: 'CHANGE-ME-filter-id-key-0000000000000', real: key },
  },
  'webhook-matcher': {
    OPERATOR_TOKEN: { placeholder: EXAMPLE_TOKEN, real: token },
    OPERATOR_TOKEN_PREVIOUS: { placeholder: EXAMPLE_TOKEN, real: token },
    WEBHOOK_SECRETS_KEY: { placeholder: EXAMPLE_KEY, real: key },
    WEBHOOK_SECRETS_PREVIOUS_KEYS: { placeholder: EXAMPLE_KEY, real: key },
  },
};

async function shapeOf(app: string): Promise<Record<string, z.ZodType>> {
  const path = join(__dirname, '../../../../apps', app, 'src/config/config');
  const module = (await import(path)) as { configSchema: z.ZodObject };
  return module.configSchema.shape as Record<string, z.ZodType>;
}

describe.each(Object.entries(SECRETS))('%s: secret settings', (app, secrets) => {
  it('declares exactly these secrets with secretSetting', async () => {
    const shape = await shapeOf(app);
    const declared = Object.keys(shape).filter((name) => isSecretSetting(shape[name]!));
    expect(declared.sort()).toEqual(Object.keys(secrets).sort());
  });

  for (const [variable, { placeholder, real }] of Object.entries(secrets))
    it(`${variable} refuses a placeholder in one line naming it, takes a real value`, async () => {
      const schema = z.object({ [variable]: (await shapeOf(app))[variable]! });
      expect(() => parseConfig(schema, { [variable]: placeholder })).toThrow(
        new ConfigError(
          variable,
          'is invalid: holds the placeholder CHANGE-ME; set a secret of your own',
        ),
      );
      expect(() => parseConfig(schema, { [variable]: real })).not.toThrow();
    });
});

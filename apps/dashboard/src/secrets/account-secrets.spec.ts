import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { DomainError } from '@meridian/errors';
import { isSecretSetting, parseConfig } from '@meridian/platform-config';
import { sealedKeyId, sealSecret, secretsKeyId } from '@meridian/platform-secrets';
import pino from 'pino';
import { Registry } from 'prom-client';
import { configSchema, type AppConfig } from '../config/config';
import { AccountSecrets } from './account-secrets';

const keyA = randomBytes(32);
const keyB = randomBytes(32);
const keyC = randomBytes(32);
const b64 = (key: Buffer) => key.toString('base64');

const env = {
  DATABASE_URL: 'postgres://x@127.0.0.1/x',
  HTTP_PORT: '0',
  BILLING_API_URL: 'http://billing/api/v1',
  WEBHOOKS_API_URL: 'http://matcher/api/v1',
  AUDIT_API_URL: 'http://audit/v1',
  OPERATOR_TOKEN: 'an-operator-token-0123456789',
  DASHBOARD_SECRETS_KEY: b64(keyB),
};

/** AccountSecrets over the config these settings make, with its log lines and metrics. */
function secretsOf(settings: Record<string, string>) {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  const registry = new Registry();
  const config: AppConfig = parseConfig(configSchema, { ...env, ...settings });
  const secrets = new AccountSecrets(config, pino({ level: 'info' }, sink), registry);
  return { secrets, lines, registry };
}

const failureOf = (fn: () => unknown): unknown => {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('did not throw');
};

describe('dashboard config: DASHBOARD_SECRETS_KEY and its previous keys (ADR 0603)', () => {
  it('takes the previous keys as an optional secret list', () => {
    expect(isSecretSetting(configSchema.shape.DASHBOARD_SECRETS_PREVIOUS_KEYS)).toBe(true);
    expect(parseConfig(configSchema, env).DASHBOARD_SECRETS_PREVIOUS_KEYS).toBeUndefined();
    const config = parseConfig(configSchema, {
      ...env,
      DASHBOARD_SECRETS_PREVIOUS_KEYS: ` ${b64(keyA)} , ${b64(keyC)}`,
    });
    expect(config.DASHBOARD_SECRETS_PREVIOUS_KEYS).toEqual([keyA, keyC]);
  });

  it.each([
    [
      'a current key of another length',
      { DASHBOARD_SECRETS_KEY: b64(randomBytes(16)) },
      /DASHBOARD_SECRETS_KEY.*must be 32 bytes, base64-encoded/,
    ],
    ['no current key', { DASHBOARD_SECRETS_KEY: undefined }, /DASHBOARD_SECRETS_KEY is required/],
    [
      'a bad previous key, by its position',
      { DASHBOARD_SECRETS_PREVIOUS_KEYS: `${b64(keyA)},not-a-key` },
      /DASHBOARD_SECRETS_PREVIOUS_KEYS is invalid: key 2 of the list must be 32 bytes/,
    ],
    [
      'the example placeholder as a previous key',
      { DASHBOARD_SECRETS_PREVIOUS_KEYS: 'Q0hBTkdFLU1FLWRhc2hib2FyZC1zZWNyZXQta2V5MzI=' },
      /DASHBOARD_SECRETS_PREVIOUS_KEYS is invalid: holds the placeholder CHANGE-ME/,
    ],
  ])('stops the start on %s, naming the variable', (_, settings, message) => {
    expect(() => parseConfig(configSchema, { ...env, ...settings })).toThrow(message);
  });
});

describe('AccountSecrets: the key ring over accounts’ API keys', () => {
  it('seals under the current key, naming it', () => {
    const { secrets } = secretsOf({ DASHBOARD_SECRETS_PREVIOUS_KEYS: b64(keyA) });
    const sealed = secrets.seal('mrd_key');
    expect(sealedKeyId(sealed)).toBe(secretsKeyId(keyB));
    expect(secrets.open('u1', sealed)).toBe('mrd_key');
  });

  it('opens a value sealed before the ring (v1, no key id) under the current or a previous key', () => {
    expect(secretsOf({}).secrets.open('u1', sealSecret(keyB, 'mrd_old'))).toBe('mrd_old');
    const { secrets } = secretsOf({ DASHBOARD_SECRETS_PREVIOUS_KEYS: b64(keyA) });
    expect(secrets.open('u1', sealSecret(keyA, 'mrd_old'))).toBe('mrd_old');
    expect(secrets.ring.needsReseal(sealSecret(keyB, 'mrd_old'))).toBe(true);
  });

  it('opens a value sealed under a previous key of the ring', () => {
    const underA = secretsOf({ DASHBOARD_SECRETS_KEY: b64(keyA) }).secrets.seal('mrd_a');
    const { secrets } = secretsOf({ DASHBOARD_SECRETS_PREVIOUS_KEYS: `${b64(keyC)},${b64(keyA)}` });
    expect(secrets.open('u1', underA)).toBe('mrd_a');
    expect(sealedKeyId(secrets.ring.reseal(underA))).toBe(secretsKeyId(keyB));
  });

  it('refuses a value under a key it does not hold: 503 secret_unavailable, counted and logged with the key id, never the key', async () => {
    const underA = secretsOf({ DASHBOARD_SECRETS_KEY: b64(keyA) }).secrets.seal('mrd_a');
    const { secrets, lines, registry } = secretsOf({ DASHBOARD_SECRETS_PREVIOUS_KEYS: b64(keyC) });
    const error = failureOf(() => secrets.open('u1', underA));
    expect(error).toBeInstanceOf(DomainError);
    expect(error).toMatchObject({ code: 'secret_unavailable', kind: 'unavailable' });
    const v1 = failureOf(() => secrets.open('u2', sealSecret(keyA, 'mrd_a')));
    expect(v1).toMatchObject({ code: 'secret_unavailable' });
    expect(lines.map((l) => [l['userId'], l['reason'], l['keyId']])).toEqual([
      ['u1', 'unknown_key', secretsKeyId(keyA)],
      ['u2', 'not_opened', null],
    ]);
    expect(String(lines[0]!['err'])).toContain('add that key to DASHBOARD_SECRETS_PREVIOUS_KEYS');
    const text = JSON.stringify(lines);
    for (const secret of ['mrd_a', b64(keyA), b64(keyB), b64(keyC)])
      expect(text).not.toContain(secret);
    const metrics = await registry.getSingleMetricAsString('dashboard_secret_open_failures_total');
    expect(metrics).toContain('dashboard_secret_open_failures_total{reason="unknown_key"} 1');
    expect(metrics).toContain('dashboard_secret_open_failures_total{reason="not_opened"} 1');
  });
});

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  chooseSecrets,
  exportedSecrets,
  legacySecrets,
  randomSecrets,
  SECRET_NAMES,
  secretsEnvOf,
  type StackSecrets,
} from './secrets';

const RANDOM: StackSecrets = {
  operator_token: 'op_random',
  webhook_secrets_key: 'random-webhook',
  dashboard_secrets_key: 'random-dashboard',
  dashboard_operator_password: 'random-password',
  filter_id_key: 'random-filter',
};

describe('the local stack secrets: which value each app gets', () => {
  it('stores random values for a stack with no stored secrets and no data', () => {
    const choice = chooseSecrets({ exported: {}, stored: {}, legacy: {}, random: RANDOM });
    expect(choice.values).toEqual(RANDOM);
    expect(choice.toStore).toEqual(RANDOM);
    expect(Object.values(choice.sources)).toEqual(SECRET_NAMES.map(() => 'generated'));
  });

  it('uses the stored values and stores nothing when all are stored', () => {
    const stored = { ...RANDOM, webhook_secrets_key: 'stored-webhook' };
    const choice = chooseSecrets({
      exported: {},
      stored,
      legacy: { webhook_secrets_key: 'legacy-webhook' },
      random: { ...RANDOM, webhook_secrets_key: 'other' },
    });
    expect(choice.values).toEqual(stored);
    expect(choice.toStore).toEqual({});
    expect(choice.sources.webhook_secrets_key).toBe('stored');
  });

  it('stores the legacy value where there is one, a random one for the rest', () => {
    const choice = chooseSecrets({
      exported: {},
      stored: { operator_token: 'op_stored' },
      legacy: { webhook_secrets_key: 'legacy-webhook', operator_token: 'op_file' },
      random: RANDOM,
    });
    expect(choice.values.operator_token).toBe('op_stored');
    expect(choice.values.webhook_secrets_key).toBe('legacy-webhook');
    expect(choice.values.filter_id_key).toBe('random-filter');
    expect(choice.toStore).toEqual({
      webhook_secrets_key: 'legacy-webhook',
      dashboard_secrets_key: 'random-dashboard',
      dashboard_operator_password: 'random-password',
      filter_id_key: 'random-filter',
    });
    expect(choice.sources).toMatchObject({
      operator_token: 'stored',
      webhook_secrets_key: 'legacy',
      filter_id_key: 'generated',
    });
  });

  it('lets an exported value win without storing it', () => {
    const choice = chooseSecrets({
      exported: { webhook_secrets_key: 'exported-webhook', filter_id_key: 'exported-filter' },
      stored: { webhook_secrets_key: 'stored-webhook' },
      legacy: {},
      random: RANDOM,
    });
    expect(choice.values.webhook_secrets_key).toBe('exported-webhook');
    expect(choice.values.filter_id_key).toBe('exported-filter');
    expect(choice.toStore.webhook_secrets_key).toBeUndefined();
    // Not stored yet: the random value is stored for the runs without the export.
    expect(choice.toStore.filter_id_key).toBe('random-filter');
    expect(choice.sources.filter_id_key).toBe('exported');
  });

  it('reads the exported variables, an empty one as unset; the operator token is never read', () => {
    expect(
      exportedSecrets({
        WEBHOOK_SECRETS_KEY: 'w',
        DASHBOARD_SECRETS_KEY: 'd',
        DASHBOARD_OPERATOR_PASSWORD: '',
        FILTER_ID_KEY: 'f',
        OPERATOR_TOKEN: 'op_x',
      }),
    ).toEqual({ webhook_secrets_key: 'w', dashboard_secrets_key: 'd', filter_id_key: 'f' });
  });

  it('derives the legacy values as the stack did from its directory, only when data exists', () => {
    const dir = '/srv/old-checkout/.stack';
    // Computed by the launcher before the store (tools/stack/layout.ts, dashboard.ts derive()).
    expect(legacySecrets(dir, true)).toEqual({
      webhook_secrets_key: '57yGl18Jinz++ptwrxYVNDoUI1cPh5JWE4xitmGZjcE=',
      dashboard_secrets_key: 'QPInpHxrX6T0xA/pPJzPCNKMc797v7fII6/GH6PTBNQ=',
      dashboard_operator_password: 'i6owAvaHnKTRsdPVRyBP',
    });
    expect(legacySecrets(dir, false)).toEqual({});
  });

  it("takes the legacy operator token from the stack directory's secrets.json", () => {
    const dir = mkdtempSync(join(tmpdir(), 'meridian-secrets-'));
    try {
      writeFileSync(join(dir, 'secrets.json'), JSON.stringify({ operatorToken: 'op_from_file' }));
      expect(legacySecrets(dir, false)).toEqual({ operator_token: 'op_from_file' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('makes random values in the forms the apps accept', () => {
    const a = randomSecrets();
    expect(a).not.toEqual(randomSecrets());
    expect(a.operator_token).toMatch(/^op_[0-9a-f]{48}$/);
    for (const key of [a.webhook_secrets_key, a.dashboard_secrets_key])
      expect(Buffer.from(key, 'base64')).toHaveLength(32);
    expect(a.filter_id_key.length).toBeGreaterThanOrEqual(32);
    expect(a.dashboard_operator_password.length).toBeGreaterThanOrEqual(12);
  });

  it('gives each app only its own secrets', () => {
    expect(secretsEnvOf('webhook-matcher', RANDOM)).toEqual({
      WEBHOOK_SECRETS_KEY: 'random-webhook',
    });
    expect(secretsEnvOf('delivery-worker', RANDOM)).toEqual({
      WEBHOOK_SECRETS_KEY: 'random-webhook',
    });
    expect(secretsEnvOf('dashboard', RANDOM)).toEqual({
      DASHBOARD_SECRETS_KEY: 'random-dashboard',
      OPERATOR_PASSWORD: 'random-password',
    });
    expect(secretsEnvOf('rpc-gateway', RANDOM)).toEqual({ FILTER_ID_KEY: 'random-filter' });
    expect(secretsEnvOf('billing-ledger', RANDOM)).toEqual({});
  });
});

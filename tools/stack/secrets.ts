import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';

/**
 * The local stack's generated secrets, kept with the data they seal: a table of the stack's own,
 * `local_stack.secrets`, in the database the apps use (the stack makes it, no app's migrations).
 * Postgres may be the machine's shared server or DATABASE_URL's, its data outside the stack
 * directory, so a file there would not do: a moved `.stack`, or a second checkout over the same
 * database, must open what the first sealed. Local only: a deployment sets every one of these.
 */
export const SECRET_NAMES = [
  'operator_token',
  'webhook_secrets_key',
  'dashboard_secrets_key',
  'dashboard_operator_password',
  'filter_id_key',
] as const;

export type SecretName = (typeof SECRET_NAMES)[number];
export type StackSecrets = Record<SecretName, string>;

/** The variable that, exported before `npm start`, wins over the stored value (not stored). */
export const SECRET_ENV: Readonly<Record<SecretName, string | undefined>> = {
  operator_token: undefined,
  webhook_secrets_key: 'WEBHOOK_SECRETS_KEY',
  dashboard_secrets_key: 'DASHBOARD_SECRETS_KEY',
  dashboard_operator_password: 'DASHBOARD_OPERATOR_PASSWORD',
  filter_id_key: 'FILTER_ID_KEY',
};

/** The exported values among SECRET_ENV (an empty value counts as unset). */
export function exportedSecrets(env: NodeJS.ProcessEnv): Partial<StackSecrets> {
  const exported: Partial<StackSecrets> = {};
  for (const name of SECRET_NAMES) {
    const value = SECRET_ENV[name] && env[SECRET_ENV[name]];
    if (value) exported[name] = value;
  }
  return exported;
}

/** Fresh values, each in the form its app reads. */
export function randomSecrets(): StackSecrets {
  return {
    operator_token: `op_${randomBytes(24).toString('hex')}`,
    webhook_secrets_key: randomBytes(32).toString('base64'),
    dashboard_secrets_key: randomBytes(32).toString('base64'),
    dashboard_operator_password: randomBytes(15).toString('base64url'),
    filter_id_key: randomBytes(32).toString('base64'),
  };
}

/**
 * What a stack made before the store existed used: the operator token of `<dir>/secrets.json`
 * when that file is there, and, when its database already holds data (`existingData`: the data
 * is sealed under them), the keys and the operator's password derived from the stack
 * directory's absolute path. They are stored instead of random ones. No FILTER_ID_KEY was ever
 * set (each gateway made its own).
 */
export function legacySecrets(dir: string, existingData: boolean): Partial<StackSecrets> {
  const legacy: Partial<StackSecrets> = {};
  const file = join(dir, 'secrets.json');
  if (existsSync(file)) {
    const token = (JSON.parse(readFileSync(file, 'utf8')) as { operatorToken?: unknown })
      .operatorToken;
    if (typeof token === 'string' && token !== '') legacy.operator_token = token;
  }
  if (!existingData) return legacy;
  const derive = (purpose: string) =>
    createHash('sha256').update(`meridian-local-stack-dashboard-${purpose}:${dir}`).digest();
  legacy.webhook_secrets_key = createHash('sha256')
    .update(`meridian-local-stack-webhook-secrets:${dir}`)
    .digest('base64');
  legacy.dashboard_secrets_key = derive('secrets').toString('base64');
  legacy.dashboard_operator_password = derive('operator').toString('base64url').slice(0, 20);
  return legacy;
}

export interface SecretsChoice {
  /** What this run passes to the apps. */
  values: StackSecrets;
  /** What to store: every name not stored yet, never an exported value. */
  toStore: Partial<StackSecrets>;
  /** Where each value came from, for the start log. */
  sources: Record<SecretName, 'exported' | 'stored' | 'legacy' | 'generated'>;
}

/**
 * Each secret: the exported value, else the stored one, else the legacy one, else a random one.
 * A name not stored yet is stored with its legacy or random value (an exported value stays
 * the shell's: it wins for this run, and the stored one is there again without it).
 */
export function chooseSecrets(input: {
  exported: Partial<StackSecrets>;
  stored: Partial<StackSecrets>;
  legacy: Partial<StackSecrets>;
  random: StackSecrets;
}): SecretsChoice {
  const values = {} as StackSecrets;
  const toStore: Partial<StackSecrets> = {};
  const sources = {} as SecretsChoice['sources'];
  for (const name of SECRET_NAMES) {
    const kept = input.stored[name];
    const fallback = input.legacy[name] ?? input.random[name];
    if (kept === undefined) toStore[name] = fallback;
    values[name] = input.exported[name] ?? kept ?? fallback;
    sources[name] =
      input.exported[name] !== undefined
        ? 'exported'
        : kept !== undefined
          ? 'stored'
          : input.legacy[name] !== undefined
            ? 'legacy'
            : 'generated';
  }
  return { values, toStore, sources };
}

/** Schemas of the apps whose rows the legacy keys sealed (webhook-matcher's, the dashboard's). */
const SEALED_DATA_SCHEMAS = ['webhooks', 'dashboard'];

/**
 * The stack's secrets from `local_stack.secrets` in `databaseUrl`'s database, storing the ones
 * missing (chooseSecrets) before any migration runs: a database where an app's schema with
 * sealed rows already exists gets the legacy values of `dir`. One transaction under an advisory
 * lock, so two stacks starting at once on one database agree (the second reads the first's).
 */
export async function loadStackSecrets(
  databaseUrl: string,
  dir: string,
  exported: Partial<StackSecrets>,
): Promise<SecretsChoice> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('BEGIN');
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('meridian local_stack.secrets'))`);
    const existing = await client.query<{ found: boolean }>(
      'SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = ANY($1)) AS found',
      [SEALED_DATA_SCHEMAS],
    );
    await client.query('CREATE SCHEMA IF NOT EXISTS local_stack');
    await client.query(
      `CREATE TABLE IF NOT EXISTS local_stack.secrets (
         name text PRIMARY KEY,
         value text NOT NULL,
         created_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    const rows = await client.query<{ name: SecretName; value: string }>(
      'SELECT name, value FROM local_stack.secrets',
    );
    const choice = chooseSecrets({
      exported,
      stored: Object.fromEntries(rows.rows.map((row) => [row.name, row.value])),
      legacy: legacySecrets(dir, existing.rows[0]!.found),
      random: randomSecrets(),
    });
    for (const [name, value] of Object.entries(choice.toStore))
      await client.query('INSERT INTO local_stack.secrets (name, value) VALUES ($1, $2)', [
        name,
        value,
      ]);
    await client.query('COMMIT');
    return choice;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    await client.end();
  }
}

/** What each app of the stack takes from the secrets, by app (not process) name. */
export function secretsEnvOf(app: string, secrets: StackSecrets): Record<string, string> {
  switch (app) {
    case 'webhook-matcher':
    case 'delivery-worker':
      return { WEBHOOK_SECRETS_KEY: secrets.webhook_secrets_key };
    case 'dashboard':
      return {
        DASHBOARD_SECRETS_KEY: secrets.dashboard_secrets_key,
        OPERATOR_PASSWORD: secrets.dashboard_operator_password,
      };
    case 'rpc-gateway':
      return { FILTER_ID_KEY: secrets.filter_id_key };
    default:
      return {};
  }
}

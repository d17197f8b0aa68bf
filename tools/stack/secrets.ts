import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { parseSecretsKey, SecretKeyRing } from '@meridian/platform-secrets';

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
 * sealed rows already exists gets the legacy values of `dir`. A key about to be stored that opens
 * none of the values already sealed under it (the database was made from another directory) is
 * refused: the start throws and stores nothing, rather than storing keys every later start would
 * use. One transaction under an advisory lock, so two stacks starting at once on one database
 * agree (the second reads the first's).
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
    const wrong = await keysNotOpening(client, choice);
    if (wrong.length > 0) throw new Error(sealedUnderOtherKeys(wrong, choice, dir));
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

/** Where the apps keep values sealed under each key: webhook-matcher's and the dashboard's rows. */
const SEALED_UNDER = {
  webhook_secrets_key: { table: 'webhooks.webhooks', column: 'secret_sealed' },
  dashboard_secrets_key: { table: 'dashboard.users', column: 'sealed_api_key' },
} as const;

/** Sealed values read per key: the ones naming the key first, so a right key finds one. */
const SEALED_SAMPLE = 20;

/**
 * The keys about to be stored that open none of the values already sealed in their table (a
 * key whose table is missing or empty opens everything). Opening is the apps' own ring, so a
 * `v2` value is judged by its key id and tag, a `v1` value (no key id) by its tag alone.
 */
async function keysNotOpening(
  client: Client,
  choice: SecretsChoice,
): Promise<Array<keyof typeof SEALED_UNDER>> {
  const wrong: Array<keyof typeof SEALED_UNDER> = [];
  for (const name of Object.keys(SEALED_UNDER) as Array<keyof typeof SEALED_UNDER>) {
    const key = choice.toStore[name];
    if (key === undefined) continue;
    const { table, column } = SEALED_UNDER[name];
    const found = await client.query<{ found: boolean }>(
      'SELECT to_regclass($1) IS NOT NULL AS found',
      [table],
    );
    if (!found.rows[0]!.found) continue;
    const ring = new SecretKeyRing(parseSecretsKey(key));
    const sealed = await client.query<{ value: string }>(
      `SELECT ${column} AS value FROM ${table} WHERE ${column} IS NOT NULL
        ORDER BY starts_with(${column}, $1) DESC LIMIT ${SEALED_SAMPLE}`,
      [ring.currentPrefix],
    );
    if (sealed.rows.length > 0 && !sealed.rows.some((row) => opens(ring, row.value)))
      wrong.push(name);
  }
  return wrong;
}

function opens(ring: SecretKeyRing, sealed: string): boolean {
  try {
    ring.open(sealed);
    return true;
  } catch {
    return false;
  }
}

/** The one line a start refused for keys that cannot open its database's data says. */
function sealedUnderOtherKeys(
  wrong: ReadonlyArray<keyof typeof SEALED_UNDER>,
  choice: SecretsChoice,
  dir: string,
): string {
  const origin = wrong.every((name) => choice.sources[name] === 'legacy')
    ? `derived from ${dir}`
    : 'this start would store';
  return (
    `local_stack.secrets holds no ${wrong.join(', ')} for this database, and the ones ${origin} ` +
    `open none of the values sealed in ${wrong.map((name) => SEALED_UNDER[name].table).join(', ')}: ` +
    'another stack directory made this data. Nothing was stored. Start once with STACK_DIR set ' +
    'to the stack directory that made this database (its keys are then stored), or point ' +
    'DATABASE_URL at a new database'
  );
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

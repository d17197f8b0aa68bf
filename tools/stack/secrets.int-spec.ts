import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { parseSecretsKey, SecretKeyRing, sealSecret } from '@meridian/platform-secrets';
import { createTestDatabase, type TestDatabase } from '@meridian/testing';
import { legacySecrets, loadStackSecrets, SECRET_NAMES } from './secrets';

/**
 * The local stack's secrets live with its data (local_stack.secrets in the stack's database),
 * against a real Postgres: a moved stack directory, or a second checkout over the same database,
 * opens what the first sealed.
 */
describe('local stack secrets in the stack database', () => {
  let db: TestDatabase;
  const dirs: string[] = [];
  const stackDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'meridian-secrets-'));
    dirs.push(dir);
    return dir;
  };
  const sql = async (text: string, params: unknown[] = []) => {
    const client = new Client({ connectionString: db.url });
    await client.connect();
    try {
      return (await client.query(text, params)).rows;
    } finally {
      await client.end();
    }
  };
  /**
   * A database an older release made from `dir` (no local_stack.secrets): a webhook's signing
   * secret sealed as the first rings did (`v1`) and a dashboard user's API key sealed by the
   * ring (`v2`), each under the key derived from `dir`, in the apps' tables and columns.
   */
  const sealedByOldRelease = async (dir: string) => {
    const keys = legacySecrets(dir, true);
    await sql('CREATE SCHEMA webhooks');
    await sql('CREATE TABLE webhooks.webhooks (id text PRIMARY KEY, secret_sealed text NOT NULL)');
    await sql("INSERT INTO webhooks.webhooks VALUES ('wh_1', $1)", [
      sealSecret(parseSecretsKey(keys.webhook_secrets_key!), 'whsec_old'),
    ]);
    await sql('CREATE SCHEMA dashboard');
    await sql('CREATE TABLE dashboard.users (id text PRIMARY KEY, sealed_api_key text NULL)');
    const ring = new SecretKeyRing(parseSecretsKey(keys.dashboard_secrets_key!));
    await sql("INSERT INTO dashboard.users VALUES ('operator', NULL), ('u_1', $1)", [
      ring.seal('key_old'),
    ]);
    return keys;
  };
  /** The names in local_stack.secrets (none when a refused start rolled the table back too). */
  const storedNames = async () => {
    const [{ table }] = (await sql("SELECT to_regclass('local_stack.secrets') AS table")) as [
      { table: string | null },
    ];
    if (table === null) return [];
    return ((await sql('SELECT name FROM local_stack.secrets')) as Array<{ name: string }>).map(
      (row) => row.name,
    );
  };

  beforeEach(async () => {
    db = await createTestDatabase({ prefix: 'stack_secrets' });
  });
  afterEach(async () => {
    await db.drop();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('gives a new stack random secrets, and the same ones to a moved or second checkout', async () => {
    const first = await loadStackSecrets(db.url, stackDir(), {});
    expect(Object.values(first.sources)).toEqual(SECRET_NAMES.map(() => 'generated'));
    // Not the path-derived keys of old: a second stack directory over the same database.
    const moved = await loadStackSecrets(db.url, stackDir(), {});
    expect(moved.values).toEqual(first.values);
    expect(Object.values(moved.sources)).toEqual(SECRET_NAMES.map(() => 'stored'));
  });

  it("stores an existing stack's path-derived keys on its first start, then keeps them anywhere", async () => {
    // A stack from before the store: the apps' schemas exist, its operator token in secrets.json.
    await sql('CREATE SCHEMA webhooks');
    const old = '/srv/old-checkout/.stack';
    const first = await loadStackSecrets(db.url, old, {});
    expect(first.values).toMatchObject({
      webhook_secrets_key: '57yGl18Jinz++ptwrxYVNDoUI1cPh5JWE4xitmGZjcE=',
      dashboard_secrets_key: 'QPInpHxrX6T0xA/pPJzPCNKMc797v7fII6/GH6PTBNQ=',
      dashboard_operator_password: 'i6owAvaHnKTRsdPVRyBP',
    });
    expect(first.sources).toMatchObject({
      webhook_secrets_key: 'legacy',
      operator_token: 'generated',
      filter_id_key: 'generated',
    });
    const fresh = stackDir();
    writeFileSync(join(fresh, 'secrets.json'), JSON.stringify({ operatorToken: 'op_elsewhere' }));
    expect((await loadStackSecrets(db.url, fresh, {})).values).toEqual(first.values);
  });

  it('refuses to store keys derived from another directory that cannot open the sealed data', async () => {
    const made = stackDir();
    const keys = await sealedByOldRelease(made);
    await expect(loadStackSecrets(db.url, stackDir(), {})).rejects.toThrow(
      /holds no webhook_secrets_key, dashboard_secrets_key .* open none of the values sealed in webhooks\.webhooks, dashboard\.users: .*Nothing was stored\. Start once with STACK_DIR .* or point DATABASE_URL at a new database$/,
    );
    expect(await storedNames()).toEqual([]);
    // The way out the refusal names: once from the directory that made the data, then anywhere.
    const first = await loadStackSecrets(db.url, made, {});
    expect(first.values).toMatchObject(keys);
    expect(first.sources.webhook_secrets_key).toBe('legacy');
    expect((await loadStackSecrets(db.url, stackDir(), {})).values).toEqual(first.values);
  });

  it('refuses when only one key cannot open its data, naming that key', async () => {
    const made = stackDir();
    await sealedByOldRelease(made);
    await sql('DELETE FROM webhooks.webhooks');
    await expect(loadStackSecrets(db.url, stackDir(), {})).rejects.toThrow(
      /holds no dashboard_secrets_key for this database, .* sealed in dashboard\.users:/,
    );
    expect(await storedNames()).toEqual([]);
  });

  it('takes the operator token of an old secrets.json on the first start', async () => {
    const dir = stackDir();
    writeFileSync(join(dir, 'secrets.json'), JSON.stringify({ operatorToken: 'op_kept' }));
    const first = await loadStackSecrets(db.url, dir, {});
    expect(first.values.operator_token).toBe('op_kept');
    expect((await loadStackSecrets(db.url, stackDir(), {})).values.operator_token).toBe('op_kept');
  });

  it('lets an exported value win for its run without storing it', async () => {
    const dir = stackDir();
    const stored = await loadStackSecrets(db.url, dir, {});
    const exported = await loadStackSecrets(db.url, dir, { webhook_secrets_key: 'exported' });
    expect(exported.values).toEqual({ ...stored.values, webhook_secrets_key: 'exported' });
    expect((await loadStackSecrets(db.url, dir, {})).values).toEqual(stored.values);
  });

  it('agrees between two stacks starting at the same moment on one database', async () => {
    const [a, b] = await Promise.all([
      loadStackSecrets(db.url, stackDir(), {}),
      loadStackSecrets(db.url, stackDir(), {}),
    ]);
    expect(a.values).toEqual(b.values);
  });
});

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { createTestDatabase, type TestDatabase } from '@meridian/testing';
import { loadStackSecrets, SECRET_NAMES } from './secrets';

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
  const sql = async (text: string) => {
    const client = new Client({ connectionString: db.url });
    await client.connect();
    try {
      await client.query(text);
    } finally {
      await client.end();
    }
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

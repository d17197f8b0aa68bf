import { createAppDataSource, runMigrations } from '@meridian/platform-db';
import { createTestDatabase, type TestDatabase } from '@meridian/testing';
import { dataSourceOptions, SCHEMA } from '../db/data-source';
import { ApiKeysPlanScope1766100000000 } from './1766100000000-api-keys-plan-scope';

describe('billing migration: keys that held account keep plan changes (real Postgres)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ prefix: 'billing_plan_scope' });
  });
  afterAll(() => db.drop());

  it('grants plan to every active key holding account, and to no other', async () => {
    const options = dataSourceOptions(db.url);
    const all = options.migrations as Function[]; // eslint-disable-line @typescript-eslint/no-unsafe-function-type
    const before = createAppDataSource({
      ...options,
      migrations: all.filter((m) => m !== ApiKeysPlanScope1766100000000),
    });
    await before.initialize();
    try {
      await runMigrations(before, SCHEMA);
      await before.query(`
        INSERT INTO billing.accounts (id, name, type, plan_id, node_owner, plan_started_at, created_at, updated_at)
        VALUES ('acc_a', 'a', 'individual', 'free', false, now(), now(), now())`);
      await before.query(`
        INSERT INTO billing.api_keys (id, account_id, name, key_hash, key_hint, scopes, managed, created_by, created_at, revoked_at)
        VALUES ('key_every', 'acc_a', 'initial', repeat('a', 64), 'aaaa', '{account,audit,webhooks}', true, NULL, now(), NULL),
               ('key_member', 'acc_a', 'carol', repeat('b', 64), 'bbbb', '{account}', false, 'usr_carol', now(), NULL),
               ('key_audit', 'acc_a', 'ci', repeat('c', 64), 'cccc', '{audit}', false, NULL, now(), NULL),
               ('key_revoked', 'acc_a', 'old', repeat('d', 64), 'dddd', '{account,webhooks}', false, NULL, now(), now())`);
    } finally {
      await before.destroy();
    }

    const after = createAppDataSource(options);
    await after.initialize();
    try {
      expect(await runMigrations(after, SCHEMA)).toEqual(['ApiKeysPlanScope1766100000000']);
      expect(await after.query(`SELECT id, scopes FROM billing.api_keys ORDER BY id`)).toEqual([
        { id: 'key_audit', scopes: ['audit'] },
        { id: 'key_every', scopes: ['account', 'audit', 'plan', 'webhooks'] },
        { id: 'key_member', scopes: ['account', 'plan'] },
        { id: 'key_revoked', scopes: ['account', 'webhooks'] },
      ]);
    } finally {
      await after.destroy();
    }
  });
});

import { createAppDataSource, runMigrations } from '@meridian/platform-db';
import { createTestDatabase, type TestDatabase } from '@meridian/testing';
import type { DataSource } from 'typeorm';
import { UsersRepository, type UserRow } from '../auth/users.repository';
import { dataSourceOptions, SCHEMA } from '../db/data-source';
import { DashboardCustomerOwnerByDefault1764400000000 } from './1764400000000-dashboard-customer-owner-by-default';

/**
 * Rolling upgrade over `DashboardTeams1764100000000` (QA): pods of the release before teams
 * keep inserting users, without `account_role`, after the migrate Job ran. Their statement,
 * exactly as that release's `UsersRepository.insert` sent it (before commit c792a15):
 */
const OLD_RELEASE_INSERT = `INSERT INTO dashboard.users (id, email, password_hash, role, account_id, api_key_id, sealed_api_key, created_at, password_changed_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)
       ON CONFLICT DO NOTHING RETURNING id`;

describe('dashboard users: an old pod inserts against the teams schema (real Postgres)', () => {
  let db: TestDatabase;
  let ds: DataSource;
  let users: UsersRepository;
  const at = new Date('2026-11-30T10:00:00.000Z');

  const oldInsert = (id: string, role: 'customer' | 'operator', accountId: string | null) =>
    ds.query(OLD_RELEASE_INSERT, [
      id,
      `${id}@example.com`,
      'argon2-hash',
      role,
      accountId,
      accountId && `key_${id}`,
      accountId && 'v2.k.sealed',
      at,
    ]) as Promise<Array<{ id: string }>>;

  const customer = (id: string, accountId: string, accountRole: 'owner' | 'member'): UserRow => ({
    id,
    email: `${id}@example.com`,
    passwordHash: 'argon2-hash',
    role: 'customer',
    accountId,
    accountRole,
    apiKeyId: `key_${id}`,
    sealedApiKey: 'v2.k.sealed',
    createdAt: at,
  });

  beforeAll(async () => {
    db = await createTestDatabase({ prefix: 'dashboard_owner_default' });
    ds = createAppDataSource(dataSourceOptions(db.url));
    await runMigrations(ds, SCHEMA);
    await ds.initialize();
    users = new UsersRepository(ds);
  });

  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  it("an old release's customer insert succeeds and the user owns the account it names", async () => {
    expect(await oldInsert('usr_old_signup', 'customer', 'acc_old')).toEqual([
      { id: 'usr_old_signup' },
    ]);
    expect(await users.byId('usr_old_signup')).toMatchObject({
      role: 'customer',
      accountId: 'acc_old',
      accountRole: 'owner',
    });
    expect((await users.ofAccount('acc_old')).map((u) => [u.id, u.accountRole])).toEqual([
      ['usr_old_signup', 'owner'],
    ]);
  });

  it("an old release's operator insert leaves the operator without an account role", async () => {
    expect(await oldInsert('usr_old_operator', 'operator', null)).toHaveLength(1);
    expect((await users.byId('usr_old_operator'))?.accountRole).toBeNull();
  });

  it("the current code's inserts store what they write: owner, member, and NULL for the operator", async () => {
    expect(await users.insert(customer('usr_new_owner', 'acc_new', 'owner'))).toBe(true);
    expect(await users.insert(customer('usr_new_member', 'acc_new', 'member'))).toBe(true);
    expect(
      await users.insert({
        id: 'usr_new_operator',
        email: 'usr_new_operator@example.com',
        passwordHash: 'argon2-hash',
        role: 'operator',
        accountId: null,
        accountRole: null,
        apiKeyId: null,
        sealedApiKey: null,
        createdAt: at,
      }),
    ).toBe(true);
    expect((await users.ofAccount('acc_new')).map((u) => [u.id, u.accountRole])).toEqual([
      ['usr_new_owner', 'owner'],
      ['usr_new_member', 'member'],
    ]);
    expect((await users.byId('usr_new_operator'))?.accountRole).toBeNull();
  });

  it("the check still refuses clearing a customer's account role", async () => {
    await expect(
      ds.query(`UPDATE dashboard.users SET account_role = NULL WHERE id = 'usr_new_member'`),
    ).rejects.toThrow(/users_account_role/);
  });

  it('down: without the trigger the old insert is refused again, as before this migration', async () => {
    const migration = new DashboardCustomerOwnerByDefault1764400000000();
    const runner = ds.createQueryRunner();
    try {
      await migration.down(runner);
      await expect(oldInsert('usr_old_refused', 'customer', 'acc_refused')).rejects.toThrow(
        /violates check constraint "users_account_role"/,
      );
      await migration.up(runner);
      expect(await oldInsert('usr_old_again', 'customer', 'acc_again')).toHaveLength(1);
    } finally {
      await runner.release();
    }
  });
});

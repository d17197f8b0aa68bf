import {
  createAppDataSource,
  runMigrations,
  type AppDataSourceOptions,
} from '@meridian/platform-db';
import { createTestDatabase, type TestDatabase } from '@meridian/testing';
import type { DataSource } from 'typeorm';
import { dataSourceOptions, SCHEMA } from '../db/data-source';
import { DashboardOnePendingInvitation1764500000000 } from './1764500000000-dashboard-one-pending-invitation';
import { DashboardOperatorInvitations1764600000000 } from './1764600000000-dashboard-operator-invitations';
import { DashboardInvitationIdDefault1764700000000 } from './1764700000000-dashboard-invitation-id-default';

/**
 * `DashboardOnePendingInvitation1764500000000` over the rows the old code left (QA QQ, Low 3):
 * duplicate pending team invitations of one (account, email), and pending ones of an email
 * that has a user. The newest of each duplicate set stays pending, the others are `superseded`;
 * those of an email with a user are `email_has_user`; used ones are kept. With 1764600000000 the
 * operator's (no account) follow the same rule: their duplicates are set aside too.
 */
describe('dashboard invitations: one pending per (account, email), migrated (real Postgres)', () => {
  let db: TestDatabase;
  let ds: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase({ prefix: 'dashboard_one_pending' });
    const options = dataSourceOptions(db.url);
    // The schema as the release before this migration left it.
    const before = createAppDataSource({
      ...options,
      migrations: (options.migrations as unknown[]).filter(
        (m) =>
          m !== DashboardOnePendingInvitation1764500000000 &&
          m !== DashboardOperatorInvitations1764600000000 &&
          m !== DashboardInvitationIdDefault1764700000000,
      ) as AppDataSourceOptions['migrations'],
    });
    await runMigrations(before, SCHEMA);
    // Up to 1764600000000, which the second case reverts (1764700000000 has a spec of its own).
    ds = createAppDataSource({
      ...options,
      migrations: (options.migrations as unknown[]).filter(
        (m) => m !== DashboardInvitationIdDefault1764700000000,
      ) as AppDataSourceOptions['migrations'],
    });
    await ds.initialize();
  });

  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  const invitation = (code: string, email: string, at: string, account: string | null) =>
    ds.query(
      `INSERT INTO dashboard.invitations
         (code_hash, email, created_by, created_at, expires_at, id, account_id, account_role)
       VALUES ($1, $2, 'usr_owner', $3, $3::timestamptz + interval '7 days', $4, $5, $6)`,
      [code, email, at, account && `inv_${code}`, account, account && 'member'],
    );

  it('keeps the newest of duplicates, sets aside those of an email with a user, refuses new duplicates', async () => {
    await invitation('a1', 'zed@example.com', '2026-11-01T10:00:00Z', 'acc_1');
    await invitation('a2', 'Zed@example.com', '2026-11-01T10:05:00Z', 'acc_1');
    await invitation('a3', 'zed@example.com', '2026-11-01T10:01:00Z', 'acc_1');
    await invitation('b1', 'zed@example.com', '2026-11-01T10:00:00Z', 'acc_2');
    await invitation('k1', 'kim@example.com', '2026-11-01T10:00:00Z', 'acc_1');
    await invitation('k2', 'kim@example.com', '2026-11-01T10:00:00Z', null);
    await invitation('o1', 'ops-invite@example.com', '2026-11-01T10:00:00Z', null);
    await invitation('o2', 'ops-invite@example.com', '2026-11-01T10:00:00Z', null);
    await ds.query(
      `INSERT INTO dashboard.users
         (id, email, password_hash, role, account_id, account_role, api_key_id, sealed_api_key,
          created_at, password_changed_at)
       VALUES ('usr_kim', 'KIM@example.com', 'h', 'customer', 'acc_9', 'owner', 'key_kim', 'v2.k.s',
               now(), now())`,
    );
    await runMigrations(ds, SCHEMA);

    const rows = (await ds.query(
      `SELECT code_hash, void_reason FROM dashboard.invitations ORDER BY code_hash`,
    )) as Array<{ code_hash: string; void_reason: string | null }>;
    expect(Object.fromEntries(rows.map((r) => [r.code_hash, r.void_reason]))).toEqual({
      a1: 'superseded',
      a2: null,
      a3: 'superseded',
      b1: null,
      k1: 'email_has_user',
      k2: 'email_has_user',
      // The operator's duplicates too, since 1764600000000 (one rule for both scopes).
      o1: null,
      o2: 'superseded',
    });
    // A new duplicate of a pending one is refused by the index (the insert's conflict target).
    await expect(
      invitation('a4', 'ZED@example.com', '2026-11-02T10:00:00Z', 'acc_1'),
    ).rejects.toThrow(/invitations_one_pending/);
    // A user made later sets aside the invitations of its email (the trigger).
    await ds.query(
      `INSERT INTO dashboard.users
         (id, email, password_hash, role, account_id, account_role, api_key_id, sealed_api_key,
          created_at, password_changed_at)
       VALUES ('usr_zed', 'zed@example.com', 'h', 'customer', 'acc_8', 'owner', 'key_zed',
               'v2.k.s', now(), now())`,
    );
    const zed = (await ds.query(
      `SELECT code_hash, void_reason FROM dashboard.invitations
        WHERE code_hash IN ('a2', 'b1') ORDER BY code_hash`,
    )) as Array<{ void_reason: string | null }>;
    expect(zed.map((r) => r.void_reason)).toEqual(['email_has_user', 'email_has_user']);
  });

  it("1764600000000: the operator's invitations get an id, a duplicate is refused, and it reverts", async () => {
    const ids = (await ds.query(
      `SELECT code_hash, id FROM dashboard.invitations WHERE code_hash IN ('o1', 'o2')
        ORDER BY code_hash`,
    )) as Array<{ id: string | null }>;
    expect(ids.map((r) => r.id)).toEqual([
      expect.stringMatching(/^inv_[0-9a-f]{24}$/),
      expect.stringMatching(/^inv_[0-9a-f]{24}$/),
    ]);
    await expect(
      invitation('o3', 'OPS-invite@example.com', '2026-11-02T10:00:00Z', null),
    ).rejects.toThrow(/invitations_one_pending/);
    await ds.query(`UPDATE dashboard.invitations SET voided_at = now(), void_reason = 'revoked'
      WHERE code_hash = 'o1'`);
    // Reverted: a revoked one is gone (the old code deleted on revoke), the operator's have no
    // id, and the index is the team invitations' only again (an operator duplicate goes in).
    await ds.undoLastMigration({ transaction: 'each' });
    const left = (await ds.query(
      `SELECT code_hash, id FROM dashboard.invitations WHERE account_id IS NULL
        ORDER BY code_hash`,
    )) as Array<{ code_hash: string; id: string | null }>;
    expect(left).toEqual([
      { code_hash: 'k2', id: null },
      { code_hash: 'o2', id: null },
    ]);
    await invitation('o4', 'ops-invite@example.com', '2026-11-03T10:00:00Z', null);
    await ds.query(`DELETE FROM dashboard.invitations WHERE code_hash = 'o4'`);
    await runMigrations(ds, SCHEMA);
    const back = (await ds.query(
      `SELECT count(*)::int AS n FROM dashboard.invitations WHERE account_id IS NULL AND id IS NULL`,
    )) as Array<{ n: number }>;
    expect(back[0]!.n).toBe(0);
  });
});

import {
  createAppDataSource,
  runMigrations,
  type AppDataSourceOptions,
} from '@meridian/platform-db';
import { createTestDatabase, type TestDatabase } from '@meridian/testing';
import type { DataSource } from 'typeorm';
import { dataSourceOptions, SCHEMA } from '../db/data-source';
import { InvitationsRepository } from '../settings/invitations.repository';
import { DashboardInvitationIdDefault1764700000000 } from './1764700000000-dashboard-invitation-id-default';

/**
 * `DashboardInvitationIdDefault1764700000000` (QA WW): an operator invitation saved by a dashboard
 * pod of the release before 1764600000000 (its insert names `id` and passes NULL), before or
 * after this migration, gets an id, is listed under it and can be revoked by it; one of an email
 * with a pending invitation replaces it (its link works) where it used to be dropped.
 */
describe('dashboard invitations: an id whoever wrote it, migrated (real Postgres)', () => {
  let db: TestDatabase;
  let ds: DataSource;
  let invitations: InvitationsRepository;
  const NOW = new Date('2026-11-01T12:00:00Z');
  const ID = /^inv_[0-9a-f]{24}$/;

  beforeAll(async () => {
    db = await createTestDatabase({ prefix: 'dashboard_invitation_id' });
    const options = dataSourceOptions(db.url);
    // The schema as the release before this migration left it.
    const before = createAppDataSource({
      ...options,
      migrations: (options.migrations as unknown[]).filter(
        (m) => m !== DashboardInvitationIdDefault1764700000000,
      ) as AppDataSourceOptions['migrations'],
    });
    await runMigrations(before, SCHEMA);
    ds = createAppDataSource(options);
    await ds.initialize();
    invitations = new InvitationsRepository(ds);
  });

  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  /** The old release's operator invitation insert: `id`, `account_id`, `account_role` NULL. */
  const oldPodInvite = (code: string, email: string) =>
    ds.query(
      `INSERT INTO dashboard.invitations
         (code_hash, email, created_by, created_at, expires_at, id, account_id, account_role)
       VALUES ($1, $2, 'usr_operator', $3, $3::timestamptz + interval '7 days', $4, $5, $6)
       ON CONFLICT (account_id, lower(email))
         WHERE account_id IS NOT NULL AND used_at IS NULL AND voided_at IS NULL
         DO NOTHING`,
      [code, email, NOW, null, null, null],
    );

  const idOf = async (code: string): Promise<string | null> => {
    const rows = (await ds.query(`SELECT id FROM dashboard.invitations WHERE code_hash = $1`, [
      code,
    ])) as Array<{ id: string | null }>;
    return rows[0]!.id;
  };

  it('fills the ids an old pod left, gives its new rows one, and both are revoked by it', async () => {
    await oldPodInvite('before', 'before@example.com');
    expect(await idOf('before')).toBeNull();

    await runMigrations(ds, SCHEMA);
    const filled = await idOf('before');
    expect(filled).toMatch(ID);

    await oldPodInvite('during', 'during@example.com');
    const given = await idOf('during');
    expect(given).toMatch(ID);
    expect(given).not.toBe(filled);

    // An old pod invites an email again: its link is the one that works (it used to be dropped
    // by the one-pending index and answered 201 with a dead link).
    await oldPodInvite('again', 'DURING@example.com');
    expect(await invitations.byHash('again')).toMatchObject({ usedAt: null });
    expect(await invitations.byHash('again')).not.toHaveProperty('voided');
    expect(await invitations.byHash('during')).toMatchObject({ voided: 'superseded' });
    const again = await idOf('again');

    const listed = await invitations.pendingSignUps(NOW);
    expect(listed.map((i) => [i.email, i.id]).sort()).toEqual([
      ['DURING@example.com', again],
      ['before@example.com', filled],
    ]);
    expect(await invitations.revoke(null, filled!, NOW)).toBe(true);
    expect(await invitations.revoke(null, again!, NOW)).toBe(true);
    expect(await invitations.pendingSignUps(NOW)).toEqual([]);
  });

  it("keeps the new release's own ids and reverts", async () => {
    const made = await invitations.insert(
      'mine',
      'mine@example.com',
      'usr_operator',
      NOW,
      new Date(NOW.getTime() + 86_400_000),
      'inv_000000000000000000000001',
    );
    expect(made).toBe(true);
    expect(await idOf('mine')).toBe('inv_000000000000000000000001');
    // The new release's rule stands: its second invitation of a pending email is refused.
    const twice = await invitations.insert(
      'mine-2',
      'MINE@example.com',
      'usr_operator',
      NOW,
      new Date(NOW.getTime() + 86_400_000),
      'inv_000000000000000000000002',
    );
    expect(twice).toBe(false);

    await ds.undoLastMigration({ transaction: 'each' });
    await oldPodInvite('reverted', 'reverted@example.com');
    expect(await idOf('reverted')).toBeNull();
    await ds.query(`DELETE FROM dashboard.invitations WHERE code_hash = 'reverted'`);
    await runMigrations(ds, SCHEMA);
  });
});

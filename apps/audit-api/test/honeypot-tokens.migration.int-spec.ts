import { createAppDataSource, runMigrations } from '@meridian/platform-db';
import { createTestDatabase, type TestDatabase } from '@meridian/testing';
import { dataSourceOptions, SCHEMA } from '../src/db/data-source';

const HONEYPOT = '0x00000000000000000000000000000000000000aa';
const CLEARED = '0x00000000000000000000000000000000000000bb';
const CREATOR = '0xAbCdEf0000000000000000000000000000000001';

/** Honeypots found before audit.honeypot_tokens existed keep linking their creators. */
describe('migration 1796100000000: honeypot tokens copied from the verdict cache', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase({ prefix: 'audit_honeypot_tokens' });
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('copies the cached honeypot verdicts (creator in lower case), not the others', async () => {
    const options = dataSourceOptions(db.url);
    const migrations = options.migrations as Array<string | (new () => unknown)>;
    const before = createAppDataSource({ ...options, migrations: migrations.slice(0, -1) });
    await before.initialize();
    await runMigrations(before, SCHEMA);
    const verdict = (status: string, isHoneypot: number) =>
      JSON.stringify({ creator: CREATOR, status, indicators: { is_honeypot: isHoneypot } });
    await before.query(
      `INSERT INTO audit.verdicts (chain, address, product, version, verdict, computed_at)
       VALUES ('ETH', $1, 'rug-pull', 'v1', $2::jsonb, '2026-11-01T00:00:00Z'),
              ('ETH', $3, 'rug-pull', 'v2', $4::jsonb, '2026-11-02T00:00:00Z'),
              ('ETH', $5, 'wallet-check', '', '{}'::jsonb, '2026-11-02T00:00:00Z')`,
      [HONEYPOT, verdict('Fraud', 1), CLEARED, verdict('Not Fraud', 0), CREATOR.toLowerCase()],
    );
    await before.destroy();

    const after = createAppDataSource(options);
    await after.initialize();
    try {
      expect(await runMigrations(after, SCHEMA)).toEqual(['AuditHoneypotTokens1796100000000']);
      expect(
        await after.query('SELECT chain, token, creator, version FROM audit.honeypot_tokens'),
      ).toEqual([{ chain: 'ETH', token: HONEYPOT, creator: CREATOR.toLowerCase(), version: 'v1' }]);
    } finally {
      await after.destroy();
    }
  });
});

import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { testDatabaseAdminUrl } from '@meridian/testing';
import { ensureDatabase } from './database';

/** `npm start` with DATABASE_URL at a database its server does not have yet (QA ZZ). */
describe('stack: the database DATABASE_URL names is made when missing', () => {
  const admin = new Client({ connectionString: testDatabaseAdminUrl() });
  // A name that needs quoting, as a user may give one.
  const name = `Stack-e2e_${randomBytes(4).toString('hex')}`;
  const urlOf = (database: string) => {
    const url = new URL(testDatabaseAdminUrl());
    url.pathname = `/${encodeURIComponent(database)}`;
    return url.toString();
  };
  const exists = async () =>
    (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1;

  beforeAll(() => admin.connect());
  afterAll(async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${admin.escapeIdentifier(name)} WITH (FORCE)`);
    await admin.end();
  });

  it('creates it once, answers the URL as given, and leaves it be on the next start', async () => {
    expect(await exists()).toBe(false);
    const url = urlOf(name);
    expect(await ensureDatabase(url)).toBe(url);
    expect(await exists()).toBe(true);
    const client = new Client({ connectionString: url });
    await client.connect();
    await client.query('CREATE TABLE kept (x int)');
    await client.end();
    // Two starts at once, then the tables are still there.
    await Promise.all([ensureDatabase(url), ensureDatabase(url)]);
    const again = new Client({ connectionString: url });
    await again.connect();
    expect((await again.query("SELECT to_regclass('kept') AS t")).rows[0].t).toBe('kept');
    await again.end();
  });
});

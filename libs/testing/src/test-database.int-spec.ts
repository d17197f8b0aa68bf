import { Client } from 'pg';
import { createTestDatabase, testDatabaseAdminUrl, type TestDatabase } from './test-database';

async function query<T>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}

const exists = async (name: string) =>
  (
    await query<{ n: number }>(
      testDatabaseAdminUrl(),
      'SELECT count(*)::int AS n FROM pg_database WHERE datname = $1',
      [name],
    )
  )[0].n === 1;

describe('createTestDatabase', () => {
  const created: TestDatabase[] = [];
  afterAll(async () => {
    for (const db of created) await db.drop();
  });

  it('creates an empty, usable database with a unique name', async () => {
    const [a, b] = await Promise.all([createTestDatabase(), createTestDatabase()]);
    created.push(a, b);
    expect(a.name).not.toBe(b.name);
    expect(a.name).toMatch(/^test_[a-z0-9]+_[0-9a-f]{10}$/);
    expect(new URL(a.url).pathname).toBe(`/${a.name}`);

    const [current] = await query<{ db: string }>(a.url, 'SELECT current_database() AS db');
    expect(current.db).toBe(a.name);
    await query(a.url, 'CREATE TABLE thing (id int primary key)');
    await query(a.url, 'INSERT INTO thing VALUES (1)');
    const tables = await query<{ n: number }>(
      b.url,
      "SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'thing'",
    );
    expect(tables[0].n).toBe(0);
  });

  it('drop removes the database even with a connection open, and is idempotent', async () => {
    const db = await createTestDatabase({ prefix: 'droptest' });
    expect(db.name.startsWith('droptest_')).toBe(true);
    const open = new Client({ connectionString: db.url });
    await open.connect();
    open.on('error', () => undefined); // the forced drop terminates this session
    expect(await exists(db.name)).toBe(true);
    await db.drop();
    expect(await exists(db.name)).toBe(false);
    await db.drop();
    await open.end().catch(() => undefined);
  });

  it('rejects a prefix that is not a safe identifier', async () => {
    await expect(createTestDatabase({ prefix: 'Bad"; DROP' })).rejects.toThrow(
      /invalid database name prefix/,
    );
  });
});

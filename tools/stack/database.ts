import { Client } from 'pg';

/**
 * Makes the database a Postgres URL names when its server has none of that name, as the stack's
 * own `meridian` database is made on a first start: a `DATABASE_URL` at a new database name
 * starts a stack on it (QA ZZ: "database … does not exist", then the start failed). Asked of
 * the server's `postgres` database; a role that may not create databases gets Postgres's own
 * refusal. A URL without a database name (the role's default) is left as it is. Answers `url`.
 */
export async function ensureDatabase(url: string): Promise<string> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, ''));
  if (!name) return url;
  const server = new URL(url);
  server.pathname = '/postgres';
  const admin = new Client({ connectionString: server.toString() });
  await admin.connect();
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount === 0)
      await admin.query(`CREATE DATABASE ${admin.escapeIdentifier(name)}`).catch((err: unknown) => {
        // Made meanwhile by another start: the database is there, which is all this asks.
        if ((err as { code?: string }).code !== '42P04') throw err;
      });
  } finally {
    await admin.end();
  }
  return url;
}

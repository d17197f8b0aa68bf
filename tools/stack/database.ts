import { Client } from 'pg';

/**
 * Makes the database a Postgres URL names when its server has none of that name, as the stack's
 * own `meridian` database is made on a first start: a `DATABASE_URL` at a new database name
 * starts a stack on it (QA ZZ: "database … does not exist", then the start failed). Only when
 * Postgres says the database does not exist (3D000) is the server's `postgres` database asked
 * to make it, so a role that may reach only its own database is served as before; a role that
 * may not create databases gets Postgres's own refusal. Answers `url`.
 */
export async function ensureDatabase(url: string): Promise<string> {
  if (await databaseExists(url)) return url;
  const name = decodeURIComponent(new URL(url).pathname.replace(/^\//, ''));
  const server = new URL(url);
  server.pathname = '/postgres';
  const admin = new Client({ connectionString: server.toString() });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${admin.escapeIdentifier(name)}`).catch((err: unknown) => {
      // Made meanwhile by another start: the database is there, which is all this asks.
      if ((err as { code?: string }).code !== '42P04') throw err;
    });
  } finally {
    await admin.end();
  }
  return url;
}

/** Whether `url` connects; false only for Postgres's "database does not exist" (3D000). */
async function databaseExists(url: string): Promise<boolean> {
  const client = new Client({ connectionString: url });
  try {
    await client.connect();
    return true;
  } catch (err) {
    if ((err as { code?: string }).code === '3D000') return false;
    throw err;
  } finally {
    await client.end().catch(() => undefined);
  }
}

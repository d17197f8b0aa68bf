import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';

const ROOT = join(__dirname, '../../../..');
const FIXTURE = join(ROOT, 'libs/platform/grpc/src/port-in-use.fixture.ts');

/** A listener of this test's on 127.0.0.1: the port another process holds. */
async function holdPort(): Promise<Server> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

const INIT_RAN = JSON.stringify({ msg: 'init ran' });

const portOf = (server: Server) => (server.address() as { port: number }).port;

/**
 * Runs the fixture to its exit: its exit code and the lines it wrote (stdout and stderr) that are
 * not the start's ordinary JSON lines below warn (a trace, grpc-js's "E No address added…", or
 * Nest's error line would be kept).
 */
async function runFixture(
  env: Record<string, string>,
): Promise<{ code: number; lines: string[]; initRan: boolean }> {
  const child = spawn(process.execPath, ['-r', '@swc-node/register', FIXTURE], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number>((resolve) =>
    child.once('close', (exitCode) => resolve(exitCode ?? -1)),
  );
  const ordinary = (line: string) => {
    try {
      return ((JSON.parse(line) as { level?: number }).level ?? 0) < 40;
    } catch {
      return false;
    }
  };
  const all = output.split('\n').filter((line) => line.trim() !== '');
  return { code, lines: all.filter((line) => !ordinary(line)), initRan: all.includes(INIT_RAN) };
}

/** A port nobody holds now (held, then closed). */
async function freePort(): Promise<number> {
  const free = await holdPort();
  const port = portOf(free);
  await new Promise((resolve) => free.close(resolve));
  return port;
}

describe('an app started on a port in use (createHttpApp listen, startGrpcServer)', () => {
  it.each([
    // Refused before the app's init, where an app's consumers start.
    ['HTTP_PORT', 'before init', {}, false],
    // Named to createHttpApp (initListens, as billing-ledger and the gateway do): before init too.
    ['GRPC_PORT', 'named to createHttpApp, before init', { INIT_LISTENS: 'true' }, false],
    // Not named: found when its server starts, within init, still without grpc-js's lines.
    ['GRPC_PORT', 'found at init, no grpc-js lines', {}, true],
  ] as const)(
    '%s in use (%s): one fatal line naming it and the address, exit 1',
    async (setting, _when, env, initRuns) => {
      const held = await holdPort();
      try {
        const port = portOf(held);
        const other = await freePort();
        const { code, lines, initRan } = await runFixture({
          HTTP_PORT: String(setting === 'HTTP_PORT' ? port : other),
          GRPC_PORT: String(setting === 'GRPC_PORT' ? port : other),
          ...env,
        });
        expect(code).toBe(1);
        expect(initRan).toBe(initRuns);
        expect(lines).toHaveLength(1);
        expect(JSON.parse(lines[0]!)).toMatchObject({
          level: 60,
          code: 'EADDRINUSE',
          setting,
          address: `127.0.0.1:${port}`,
          msg: `${setting} ${port}: address 127.0.0.1:${port} is already in use`,
        });
      } finally {
        held.close();
      }
    },
    60_000,
  );
});

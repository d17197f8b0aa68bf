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

describe('an app started on a port in use (createHttpApp listen, startGrpcServer)', () => {
  it('HTTP_PORT in use: one fatal line naming it and the address, exit 1, before init', async () => {
    const held = await holdPort();
    const free = await holdPort();
    const grpcPort = portOf(free);
    await new Promise((resolve) => free.close(resolve));
    try {
      const port = portOf(held);
      const { code, lines, initRan } = await runFixture({
        HTTP_PORT: String(port),
        GRPC_PORT: String(grpcPort),
      });
      expect(code).toBe(1);
      // Refused before the app's init, where an app's consumers start.
      expect(initRan).toBe(false);
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0]!)).toMatchObject({
        level: 60,
        code: 'EADDRINUSE',
        setting: 'HTTP_PORT',
        address: `127.0.0.1:${port}`,
        msg: `HTTP_PORT ${port}: address 127.0.0.1:${port} is already in use`,
      });
    } finally {
      held.close();
    }
  }, 60_000);

  it('GRPC_PORT in use, named to createHttpApp (initListens, billing-ledger): one fatal line, exit 1, before init', async () => {
    const held = await holdPort();
    const httpPort = await (async () => {
      const free = await holdPort();
      const port = portOf(free);
      await new Promise((resolve) => free.close(resolve));
      return port;
    })();
    try {
      const port = portOf(held);
      const { code, lines, initRan } = await runFixture({
        HTTP_PORT: String(httpPort),
        GRPC_PORT: String(port),
        INIT_LISTENS: 'true',
      });
      expect(code).toBe(1);
      expect(initRan).toBe(false);
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0]!)).toMatchObject({
        level: 60,
        code: 'EADDRINUSE',
        setting: 'GRPC_PORT',
        msg: `GRPC_PORT ${port}: address 127.0.0.1:${port} is already in use`,
      });
    } finally {
      held.close();
    }
  }, 60_000);

  it('GRPC_PORT in use: one fatal line naming it and the address, exit 1, no grpc-js lines', async () => {
    const held = await holdPort();
    const free = await holdPort();
    const httpPort = portOf(free);
    await new Promise((resolve) => free.close(resolve));
    try {
      const port = portOf(held);
      const { code, lines, initRan } = await runFixture({
        HTTP_PORT: String(httpPort),
        GRPC_PORT: String(port),
      });
      expect(code).toBe(1);
      expect(initRan).toBe(true);
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0]!)).toMatchObject({
        level: 60,
        code: 'EADDRINUSE',
        setting: 'GRPC_PORT',
        address: `127.0.0.1:${port}`,
        msg: `GRPC_PORT ${port}: address 127.0.0.1:${port} is already in use`,
      });
    } finally {
      held.close();
    }
  }, 60_000);
});

import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { freePort } from '@meridian/testing';

/**
 * rpc-gateway's primary (GATEWAY_WORKERS > 1) asks its ports before it forks: a worker that
 * finds its port taken exits with the one fatal line, and the primary would replace it for ever
 * (QA VV). The libraries' own check is specified in libs/platform/grpc/src/port-in-use.spec.ts;
 * this is the gateway's primary, as a process.
 */
const ROOT = join(__dirname, '../../..');
const MAIN = join(ROOT, 'apps/rpc-gateway/src/main.ts');

async function holdPort(): Promise<Server> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

const portOf = (server: Server) => (server.address() as { port: number }).port;

/** Runs the gateway to its exit (killed after 60 s): exit code and its JSON lines. */
async function runGateway(env: Record<string, string>) {
  const child = spawn(process.execPath, ['-r', '@swc-node/register', MAIN], {
    cwd: ROOT,
    env: {
      ...process.env,
      REGION: 'eu',
      HTTP_HOST: '127.0.0.1',
      GATEWAY_WORKERS: '2',
      UPSTREAMS: JSON.stringify({ 'eth-mainnet': ['http://127.0.0.1:1'] }),
      STATIC_ACCESS_TOKENS: JSON.stringify({
        tok_port_in_use_0000000001: { accountId: 'a', network: 'eth-mainnet' },
      }),
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const code = await new Promise<number | null>((resolve) =>
    child.once('close', (exitCode) => resolve(exitCode)),
  );
  clearTimeout(timer);
  const lines = output
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        return { text: line };
      }
    });
  return { code, lines };
}

describe("rpc-gateway's primary on a port in use", () => {
  it.each([
    ['HTTP_PORT', false],
    ['GRPC_PORT', true],
  ] as const)(
    '%s taken: one fatal line naming it and the address, exit 1, no worker forked',
    async (setting, grpc) => {
      const held = await holdPort();
      try {
        const port = portOf(held);
        const other = await freePort();
        const { code, lines } = await runGateway({
          HTTP_PORT: String(setting === 'HTTP_PORT' ? port : other),
          GRPC_PORT: String(setting === 'GRPC_PORT' ? port : other + 1),
          GRPC_ENABLED: String(grpc),
        });
        expect(code).toBe(1);
        const loud = lines.filter((l) => typeof l['level'] !== 'number' || l['level'] >= 50);
        expect(loud).toEqual([
          expect.objectContaining({
            level: 60,
            code: 'EADDRINUSE',
            setting,
            msg: `${setting} ${port}: address 127.0.0.1:${port} is already in use`,
          }),
        ]);
        // Nothing past the primary's check: no worker wrote a line.
        expect(lines.filter((l) => l['worker'] !== undefined)).toEqual([]);
      } finally {
        held.close();
      }
    },
    90_000,
  );
});

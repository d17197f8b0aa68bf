import { createServer, type Server } from 'node:net';
import { freePort, type AppProcess } from '@meridian/testing';
import { startGatewayProcess } from './gateway-process';

/**
 * The specs' gateway replica (GATEWAY_WORKERS=2) on a port that another process took between
 * `freePort()` and the bind: its workers fail with EADDRINUSE while its primary lives on, so the
 * harness stops the replica and starts it again on new ports.
 */
describe('startGatewayProcess', () => {
  const held: Server[] = [];
  let gateway: AppProcess | undefined;

  afterAll(async () => {
    gateway?.kill('SIGKILL');
    await Promise.all(held.map((s) => new Promise((resolve) => s.close(resolve))));
  });

  it('starts the replica again on new ports when its HTTP port was taken first', async () => {
    const taken = await freePort();
    const server = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(taken, '127.0.0.1', resolve));
    held.push(server);
    const chosen: number[] = [];
    const replica = await startGatewayProcess(
      {
        REGION: 'eu',
        GRPC_ENABLED: 'false',
        GATEWAY_WORKERS: '2',
        LOG_LEVEL: 'info',
        // Nothing listens on either: the gateway serves without them (ADR 0212).
        NATS_URL: `nats://127.0.0.1:${await freePort()}`,
        NATS_PREFIX: 'procs',
        UPSTREAMS: JSON.stringify({ 'eth-mainnet': [`http://127.0.0.1:${await freePort()}`] }),
        STATIC_ACCESS_TOKENS: JSON.stringify({
          tok_process_0000000001: { accountId: 'procs', network: 'eth-mainnet', nodeRps: 10 },
        }),
      },
      {
        workers: 2,
        startTimeoutMs: 100_000,
        choosePort: async () => {
          chosen.push(chosen.length === 0 ? taken : await freePort());
          return chosen.at(-1)!;
        },
      },
    );
    gateway = replica.app;
    expect(chosen).toHaveLength(2);
    expect(replica.port).toBe(chosen[1]);
    expect(replica.url).toBe(`http://127.0.0.1:${chosen[1]}`);
    expect(replica.listening()).toHaveLength(2);
    expect((await fetch(`${replica.url}/healthz`)).status).toBe(200);
  }, 120_000);
});

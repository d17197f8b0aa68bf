import { createServer, connect, type Server, type Socket } from 'node:net';
import { startAnvil, type AnvilInstance } from '@meridian/testing';
import { createPublicClient, http, parseEther, type Abi, type Address, type Hex } from 'viem';
import { deployRealWorldToken, REAL_WORLD_TOKENS } from '../bench/real-world-corpus';
import { ForkSimulator } from '../src/rug-pull/fork/fork-simulator';
import { fixture, setUpDevnet, SUPPLY, type Devnet } from './support/devnet';

/**
 * A TCP pass-through to the devnet that resets its first `failures` connections: the first fork
 * node started through it dies at once ("failed to get fork block number"), as a fork node does
 * when its upstream blips on a loaded host.
 */
function flakyProxy(target: URL, failures: number): Promise<{ server: Server; url: string }> {
  let left = failures;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    if (left > 0) {
      left -= 1;
      client.destroy();
      return;
    }
    const upstream = connect(Number(target.port), target.hostname);
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  server.on('close', () => sockets.forEach((s) => s.destroy()));
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolve({ server, url: `http://127.0.0.1:${port}` });
    }),
  );
}

describe('ForkSimulator (anvil fork of an anvil devnet)', () => {
  let anvil: AnvilInstance;
  let devnet: Devnet;
  let token: Address;

  beforeAll(async () => {
    anvil = await startAnvil({ chainId: 1 });
    devnet = await setUpDevnet(anvil.url);
    const cooldown = REAL_WORLD_TOKENS.find((t) => t.contract === 'SellCooldownToken')!;
    const f = fixture(cooldown.contract as 'CleanToken') as { abi: Abi; bytecode: Hex };
    token = await deployRealWorldToken(devnet, cooldown, f, SUPPLY);
  }, 240_000);

  afterAll(async () => {
    await anvil?.stop();
  });

  it('runs a trade again on a new fork node when the first one dies: a sell cooldown is cleared, not reported as a failure', async () => {
    const proxy = await flakyProxy(new URL(anvil.url), 1);
    const simulator = new ForkSimulator(proxy.url);
    try {
      const blockNumber = await createPublicClient({ transport: http(anvil.url) }).getBlockNumber();
      const findings = await simulator.trade(
        token,
        devnet.uniswap.router as Address,
        parseEther('0.1'),
        blockNumber,
      );
      expect(findings).toMatchObject({ buyOk: true, sellOk: true, transferOk: true });
    } finally {
      await simulator.close();
      proxy.server.close();
    }
  }, 120_000);
});

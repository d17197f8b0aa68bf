import { createServer as createHttpServer } from 'node:http';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { startAnvil, type AnvilInstance } from '@meridian/testing';
import {
  createPublicClient,
  http,
  parseAbi,
  parseEther,
  type Abi,
  type Address,
  type Hex,
} from 'viem';
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

/**
 * A JSON-RPC pass-through to the devnet that answers the first `lies` fetches of `account`'s
 * code with no code, as a fork node's upstream that served a bad answer would: given the pool's
 * address, the fork node's buy reverts on a pool that is not there, and the session fails
 * without throwing. With `lateMs`, every fetch of that code is answered so much later, as a
 * remote upstream or a busy host answers.
 */
async function lyingProxy(target: string, account: Address, lies: number, lateMs = 0) {
  let left = lies;
  const fetches = { lied: 0, total: 0 };
  const relay = async (body: string): Promise<unknown> => {
    const request = JSON.parse(body) as { method: string; params?: unknown[] };
    const upstream = await fetch(target, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    const answer = (await upstream.json()) as { result?: unknown };
    const asksForAccount =
      (request.method === 'eth_getCode' || request.method === 'eth_getAccountInfo') &&
      String(request.params?.[0]).toLowerCase() === account.toLowerCase();
    if (asksForAccount) {
      fetches.total += 1;
      if (left > 0) {
        left -= 1;
        fetches.lied += 1;
        answer.result =
          request.method === 'eth_getCode' ? '0x' : { ...(answer.result as object), code: '0x' };
      }
      if (lateMs > 0) await new Promise((resolve) => setTimeout(resolve, lateMs));
    }
    return answer;
  };
  const server = createHttpServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      // A relay that fails answers 502, so the fork node retries instead of waiting on it.
      relay(body).then(
        (answer) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(answer));
        },
        () => res.writeHead(502).end(),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { server, url: `http://127.0.0.1:${port}`, fetches };
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

  /** Buys, sells and transfers 0.1 ETH of `asset` on fork nodes behind `proxy`, then closes both. */
  async function tradeThrough(
    proxy: { url: string; server: { close(): void } },
    asset: Address,
    blockNumber: bigint,
  ) {
    const simulator = new ForkSimulator(proxy.url);
    try {
      return await simulator.trade(
        asset,
        devnet.uniswap.router as Address,
        parseEther('0.1'),
        blockNumber,
      );
    } finally {
      await simulator.close();
      proxy.server.close();
    }
  }

  it('runs a trade again on a new fork node when the first one dies: a sell cooldown is cleared, not reported as a failure', async () => {
    const blockNumber = await createPublicClient({ transport: http(anvil.url) }).getBlockNumber();
    const findings = await tradeThrough(
      await flakyProxy(new URL(anvil.url), 1),
      token,
      blockNumber,
    );
    expect(findings).toMatchObject({ buyOk: true, sellOk: true, transferOk: true });
  }, 120_000);

  it('runs a trade again on a new fork node when a session fails without dying: only the last session failure is reported', async () => {
    const client = createPublicClient({ transport: http(anvil.url) });
    const blockNumber = await client.getBlockNumber();
    const pool = await client.readContract({
      address: devnet.uniswap.factory,
      abi: parseAbi(['function getPair(address, address) view returns (address)']),
      functionName: 'getPair',
      args: [token, devnet.uniswap.weth],
    });
    const trade = async (lies: number) => {
      const proxy = await lyingProxy(anvil.url, pool, lies);
      const findings = await tradeThrough(proxy, token, blockNumber);
      return { findings, fetches: { ...proxy.fetches } };
    };
    // The first node was lied to and failed the buy; the second fetched the pool again.
    const once = await trade(1);
    expect(once.fetches.lied).toBe(1);
    expect(once.fetches.total).toBeGreaterThan(once.fetches.lied);
    expect(once.findings).toMatchObject({ buyOk: true, sellOk: true, transferOk: true });
    // Lied to every time: every session (three) fails, and the failure is what is reported.
    const always = await trade(Number.MAX_SAFE_INTEGER);
    expect(always.fetches.lied).toBeGreaterThanOrEqual(3);
    expect(always.findings).toMatchObject({ buyOk: false, sellOk: false });
  }, 120_000);

  it('sends a trade with the gas it may need, not an estimate made in the fork block: a buy mined a second later does not run out of gas', async () => {
    // A pool funded in the fork block itself and never traded: its price accumulators are zero
    // and its last update is in the fork block's second. The first trade in a later second
    // writes both accumulators, 44k gas the fork node's estimate (made in the fork block's
    // environment) leaves out.
    const clean = fixture('CleanToken');
    const fresh = await devnet.deploy(clean.abi, clean.bytecode, [SUPPLY]);
    const pool = await devnet.addLiquidity(fresh, SUPPLY / 2n, parseEther('10'));
    const client = createPublicClient({ transport: http(anvil.url) });
    const blockNumber = await client.getBlockNumber();
    const [, , poolUpdated] = await client.readContract({
      address: pool,
      abi: parseAbi(['function getReserves() view returns (uint112, uint112, uint32)']),
      functionName: 'getReserves',
    });
    const forkBlock = await client.getBlock({ blockNumber });
    expect(BigInt(poolUpdated)).toBe(forkBlock.timestamp);
    // The pool's code reaches the fork node a second late (between the node's reset to the fork
    // block and the buy), so the buy is mined a second or more after the fork block: whatever
    // the host's load, as a fork node with a remote upstream always does.
    const proxy = await lyingProxy(anvil.url, pool, 0, 1_100);
    const findings = await tradeThrough(proxy, fresh, blockNumber);
    expect(proxy.fetches.total).toBeGreaterThan(0);
    expect(findings).toMatchObject({ buyOk: true, sellOk: true, transferOk: true, buyTax: 0 });
  }, 120_000);
});

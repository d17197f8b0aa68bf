import { request } from 'node:http';
import { connect } from 'node:net';
import { startAnvil, type AnvilInstance, type AppProcess } from '@meridian/testing';
import { provisionNamespace } from './gateway-harness';
import { startGatewayProcess, type GatewayLogLine } from './gateway-process';

/**
 * No process dies of a request, and a worker that dies anyway is replaced: the gateway as it is
 * run in production (`main.ts`, GATEWAY_WORKERS=2, process guard installed), a worker killed
 * outright (SIGKILL: no guard can catch it), the replica serving throughout and back to two
 * workers. The guard's own behaviour (log with the request id, keep serving) is proven on a real
 * process in libs/platform/observability (process-guard.spec.ts).
 */
const TOKEN = 'tok_workers_0000000001';

describe('rpc-gateway worker processes', () => {
  let anvil: AnvilInstance;
  let namespace: Awaited<ReturnType<typeof provisionNamespace>>;
  let gateway: AppProcess;
  let url: string;
  let lines: GatewayLogLine[];
  let listening: () => GatewayLogLine[];

  beforeAll(async () => {
    [anvil, namespace] = await Promise.all([startAnvil({ chainId: 1 }), provisionNamespace()]);
    ({
      app: gateway,
      url,
      lines,
      listening,
    } = await startGatewayProcess(
      {
        REGION: 'eu',
        GATEWAY_WORKERS: '2',
        LOG_LEVEL: 'info',
        REQUEST_LOGS: 'false',
        NATS_URL: namespace.url,
        NATS_PREFIX: namespace.prefix,
        UPSTREAMS: JSON.stringify({ 'eth-mainnet': [anvil.url] }),
        STATIC_ACCESS_TOKENS: JSON.stringify({
          [TOKEN]: { accountId: 'workers', network: 'eth-mainnet', nodeRps: 10_000 },
        }),
      },
      { workers: 2, startTimeoutMs: 240_000 },
    ));
  }, 300_000);

  afterAll(async () => {
    gateway?.kill('SIGKILL');
    await anvil?.stop();
    await namespace?.cleanup();
  });

  // Each call is bounded: a connection the dying worker had taken is reset or never answered.
  const call = async () =>
    fetch(`${url}/${TOKEN}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}',
      signal: AbortSignal.timeout(10_000),
    }).then(
      (r) => r.json() as Promise<{ result?: string }>,
      () => undefined,
    );

  /** One call on a connection of its own, so the primary hands each to the next worker. */
  const callAlone = (method: string, params: unknown[]) =>
    new Promise<{ result?: unknown; error?: { message: string } }>((resolve, reject) => {
      const req = request(
        `${url}/${TOKEN}`,
        { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } },
        (res) => {
          let text = '';
          res.on('data', (d: Buffer) => (text += d.toString()));
          res.on('end', () => resolve(JSON.parse(text) as { result?: unknown }));
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }));
    });

  it('a filter made on one worker is read on the other: the workers share one filter-id key', async () => {
    // FILTER_ID_KEY is unset here: the primary made one key for its workers, and said so.
    expect(lines.some((l) => l.msg?.startsWith('FILTER_ID_KEY is not set'))).toBe(true);
    const made = await callAlone('eth_newBlockFilter', []);
    expect(typeof made.result).toBe('string');
    const polls = [];
    for (let i = 0; i < 8; i++) polls.push(await callAlone('eth_getFilterChanges', [made.result]));
    expect(polls.map((p) => p.error?.message)).toEqual(new Array(8).fill(undefined));
  });

  it('a killed worker is replaced by its primary; the replica keeps answering', async () => {
    const [victim, survivor] = listening();
    process.kill(victim!.pid!, 'SIGKILL');
    // Calls made while one worker is gone are served by the other.
    const during = await Promise.all(Array.from({ length: 10 }, call));
    expect(during.filter((a) => a?.result !== undefined).length).toBeGreaterThanOrEqual(5);

    // A worker takes seconds to start (Nest, NATS, health checks), more on a busy machine.
    const deadline = Date.now() + 240_000;
    while (listening().length < 3 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    const replacement = listening()[2];
    expect(replacement).toBeDefined();
    expect(replacement!.pid).not.toBe(victim!.pid);
    expect(replacement!.pid).not.toBe(survivor!.pid);
    expect(lines.some((l) => l.msg === 'gateway worker died; replacing it')).toBe(true);
    expect(() => process.kill(replacement!.pid!, 0)).not.toThrow();
    expect(() => process.kill(survivor!.pid!, 0)).not.toThrow();

    const after = await Promise.all(Array.from({ length: 20 }, call));
    expect(after.every((a) => typeof a?.result === 'string')).toBe(true);
  }, 300_000);

  it('every worker killed at once: the primary stays and replaces them all', async () => {
    const before = listening().length;
    const pids = listening()
      .slice(-2)
      .map((l) => l.pid!);
    for (const pid of pids) process.kill(pid, 'SIGKILL');
    const deadline = Date.now() + 240_000;
    while (listening().length < before + 2 && Date.now() < deadline) {
      expect(gateway.child.exitCode).toBeNull();
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(listening()).toHaveLength(before + 2);
    const answers = await Promise.all(Array.from({ length: 10 }, call));
    expect(answers.every((a) => typeof a?.result === 'string')).toBe(true);
  }, 300_000);

  it('a request that used to end a process (WebSocket upgrade to /%zz) ends none', async () => {
    const pids = listening()
      .slice(-2)
      .map((l) => l.pid!);
    for (let i = 0; i < 4; i++) {
      const status = await new Promise<number>((resolve) => {
        const socket = connect(Number(new URL(url).port), '127.0.0.1', () =>
          socket.write(
            'GET /%zz HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
              'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
          ),
        );
        let out = '';
        socket.on('data', (d: Buffer) => (out += d.toString()));
        socket.on('error', () => undefined);
        socket.on('close', () => resolve(Number(out.slice(9, 12)) || 0));
      });
      expect(status).toBe(401);
    }
    for (const pid of pids) expect(() => process.kill(pid, 0)).not.toThrow();
    expect(listening()).toHaveLength(5);
    expect(typeof (await call())?.result).toBe('string');
  });
});

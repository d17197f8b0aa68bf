import { createServer, type Server } from 'node:http';
import WebSocket from 'ws';
import { startAnvil, type AnvilInstance } from '@meridian/testing';
import { provisionNamespace } from './gateway-harness';
import { startGatewayProcess, type GatewayProcess } from './gateway-process';

/**
 * One token's WebSocket flood against a real gateway process (ADR 0203 amendment "Bounded work
 * per connection"). QA: five connections sending eth_getBlockByNumber ["latest",true] as fast as
 * they could made the gateway relay (and bill) their messages for 89 s after the clients left,
 * another tenant's calls waited seconds, and SIGTERM took ~90 s. Here the node is anvil behind
 * a proxy that counts the calls it relays and answers each after 10 ms, as a real node's
 * latency does; the limits are small so that the test stays small.
 */
const ATTACKER = 'tok_ws_flood_attacker_000001';
const VICTIM = 'tok_ws_flood_victim_00000001';
const CAP = 20;
const CONNECTIONS_PER_TOKEN = 3;
const FLOOD = 1_500;
const FLOOD_METHOD = 'eth_getBlockByNumber';
const VICTIM_METHOD = 'eth_getBalance';
const flood = (id: number) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: FLOOD_METHOD, params: ['latest', true] });

/** anvil behind a proxy that logs every call it relays, by method, and those in flight. */
async function countingUpstream(anvilUrl: string) {
  const state = { calls: [] as string[], inFlight: 0 };
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      state.inFlight++;
      const parsed = JSON.parse(body) as { method: string } | { method: string }[];
      for (const call of Array.isArray(parsed) ? parsed : [parsed]) state.calls.push(call.method);
      setTimeout(() => {
        fetch(anvilUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
          .then((answer) => answer.text())
          .then(
            (text) => response.end(text),
            () => response.destroy(),
          )
          .finally(() => state.inFlight--);
      }, 10);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    url,
    state,
    count: (method: string) => state.calls.filter((m) => m === method).length,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function open(gateway: GatewayProcess, token: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${gateway.url.replace('http', 'ws')}/${token}/`);
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

async function until(check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
}

describe('rpc-gateway: one token flooding a WebSocket connection', () => {
  let anvil: AnvilInstance;
  let upstream: Awaited<ReturnType<typeof countingUpstream>>;
  let namespace: Awaited<ReturnType<typeof provisionNamespace>>;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    anvil = await startAnvil({ chainId: 1 });
    upstream = await countingUpstream(anvil.url);
    namespace = await provisionNamespace();
    gateway = await startGatewayProcess(
      {
        REGION: 'eu',
        GRPC_ENABLED: 'false',
        GATEWAY_WORKERS: '1',
        LOG_LEVEL: 'info',
        NATS_URL: namespace.url,
        NATS_PREFIX: namespace.prefix,
        UPSTREAMS: JSON.stringify({ 'eth-mainnet': [upstream.url] }),
        STATIC_ACCESS_TOKENS: JSON.stringify({
          [ATTACKER]: { accountId: 'ws-flood-attacker', network: 'eth-mainnet', nodeRps: 1e6 },
          [VICTIM]: { accountId: 'ws-flood-victim', network: 'eth-mainnet', nodeRps: 1e6 },
        }),
        WS_MAX_CALLS_IN_FLIGHT_PER_CONNECTION: String(CAP),
        WS_MAX_CONNECTIONS_PER_TOKEN: String(CONNECTIONS_PER_TOKEN),
      },
      { workers: 1, startTimeoutMs: 60_000 },
    );
  }, 120_000);

  afterAll(async () => {
    await gateway?.app.stop(0);
    await upstream?.close();
    await anvil?.stop();
    await namespace?.cleanup();
  });

  it("answers calls past the cap -32005 at once under their ids, and another token's calls are not queued behind the flood", async () => {
    const ws = await open(gateway, ATTACKER);
    const answers: { id: number; result?: unknown; error?: { code: number } }[] = [];
    ws.on('message', (data) => answers.push(JSON.parse(data.toString())));
    for (let id = 1; id <= FLOOD; id++) ws.send(flood(id));
    // Another tenant's HTTP call while the flood is being answered: served, and relayed before
    // the flood's backlog (where the old gateway queued it), not after it.
    const before = upstream.count(FLOOD_METHOD);
    const victim = await fetch(`${gateway.url}/${VICTIM}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: VICTIM_METHOD,
        params: ['0x000000000000000000000000000000000000dEaD', 'latest'],
      }),
    });
    expect(victim.status).toBe(200);
    expect(((await victim.json()) as { result?: unknown }).result).toMatch(/^0x/);
    const floodAhead = upstream.state.calls.indexOf(VICTIM_METHOD) - before;
    expect(floodAhead).toBeLessThanOrEqual(2 * CAP);

    await until(() => answers.length === FLOOD, 30_000);
    expect(answers).toHaveLength(FLOOD);
    expect(new Set(answers.map((a) => a.id)).size).toBe(FLOOD);
    const refused = answers.filter((a) => a.error?.code === -32005);
    const served = answers.filter((a) => a.result !== undefined);
    expect(refused.length + served.length).toBe(FLOOD);
    expect(refused.length).toBeGreaterThan(0);
    // Every message leaves its request line, the refused ones too (README "Request log"): 429,
    // the session's network and account, its one call, nothing billed.
    const attackerLines = () =>
      gateway.lines.filter(
        (l) => l.msg === 'rpc ws message' && l['account'] === 'ws-flood-attacker',
      );
    await until(() => attackerLines().length >= FLOOD, 10_000);
    const lines = attackerLines();
    expect(lines).toHaveLength(FLOOD);
    const refusedLines = lines.filter((l) => l['status'] === 429);
    expect(refusedLines).toHaveLength(refused.length);
    expect(refusedLines[0]).toMatchObject({
      network: 'eth-mainnet',
      calls: 1,
      billed_calls: 0,
      cu: 0,
    });
    ws.terminate();
  }, 60_000);

  it('relays nothing more once the flooding connection is gone: at most its calls in flight', async () => {
    await until(() => upstream.state.inFlight === 0, 30_000);
    const ws = await open(gateway, ATTACKER);
    const before = upstream.count(FLOOD_METHOD);
    for (let id = 1; id <= FLOOD; id++) ws.send(flood(id));
    // The client leaves as soon as its frames are written.
    await new Promise<void>((resolve) => ws.once('message', () => resolve()));
    ws.terminate();
    const atClose = upstream.count(FLOOD_METHOD);
    // Let whatever the gateway still does reach the node: it keeps nothing in flight for long.
    await until(() => upstream.state.inFlight === 0, 30_000);
    let seen = -1;
    while (seen !== upstream.count(FLOOD_METHOD)) {
      seen = upstream.count(FLOOD_METHOD);
      await new Promise((r) => setTimeout(r, 500));
    }
    // The old gateway went on relaying (and billing) all of them, for seconds after the close.
    expect(upstream.count(FLOOD_METHOD) - atClose).toBeLessThanOrEqual(CAP);
    expect(upstream.count(FLOOD_METHOD) - before).toBeLessThan(FLOOD / 2);
  }, 60_000);

  it("refuses a token's connections past its cap with HTTP 429 and the JSON-RPC refusal; another token still connects", async () => {
    const held = await Promise.all(
      Array.from({ length: CONNECTIONS_PER_TOKEN }, () => open(gateway, ATTACKER)),
    );
    const refused = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const ws = new WebSocket(`${gateway.url.replace('http', 'ws')}/${ATTACKER}/`);
      ws.once('open', () => reject(new Error('upgraded past the cap')));
      ws.on('error', () => undefined);
      ws.once('unexpected-response', (_request, response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      });
    });
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body)).toMatchObject({ id: null, error: { code: -32005 } });
    const other = await open(gateway, VICTIM);
    for (const ws of [...held, other]) ws.terminate();
  }, 60_000);

  it('SIGTERM under a flood from a client that reads nothing: its socket is cut by the WebSocket edge, so the stop ends clean', async () => {
    const ws = await open(gateway, ATTACKER);
    for (let id = 1; id <= FLOOD; id++) ws.send(flood(id));
    await new Promise<void>((resolve) => ws.once('message', () => resolve()));
    // It neither reads answers nor answers the close frame from now on.
    (ws as unknown as { _socket: { pause(): void } })._socket.pause();
    const stopped = Date.now();
    gateway.app.kill('SIGTERM');
    const exit = await gateway.app.exited();
    // Measured, not bounded (1-2 s here; a loaded CI only makes it later). How it stopped is
    // what tells: the edge cut the unread socket after its 1 s close grace, so the HTTP server
    // closed with nothing for its drain to cut, and Nest's shutdown hook, done, raised SIGTERM
    // again. A stop held on the unread socket (the old gateway: ~90 s) says both lines below:
    // the drain's at 10 s (its cut does not reach an upgraded socket), then the stop deadline's
    // at 15 s, and exits 1 (seen with the edge's cut disabled).
    console.info(`SIGTERM under the flood: exited in ${Date.now() - stopped} ms`);
    const stopLines = ['HTTP drain over: open connections cut', 'graceful stop overran: exiting'];
    expect(gateway.lines.map((line) => line.msg).filter((msg) => stopLines.includes(msg!))).toEqual(
      [],
    );
    expect(exit).toEqual({ code: null, signal: 'SIGTERM' });
    ws.terminate();
  }, 60_000);
});

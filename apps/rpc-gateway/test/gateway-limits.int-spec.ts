import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { startAnvil, type AnvilInstance } from '@meridian/testing';
import { credentials, Metadata, status, type ServiceError } from '@grpc/grpc-js';
import WebSocket from 'ws';
import { toH256 } from '../src/bor-grpc/bor-mapping';
import {
  metricValue,
  provisionNamespace,
  rpc,
  startGateway,
  type RunningGateway,
  borApiClientClass,
} from './gateway-harness';

const TOKENS = {
  eth: 'tok_lim_eth_000000001',
  polygon: 'tok_lim_polygon_00001',
  /** Another account on the same network. */
  otherEth: 'tok_lim_eth_other_001',
};
const TOPIC = `0x${'cd'.repeat(32)}`;
/** Init code that emits one log with TOPIC and deploys nothing. */
const LOG_DEPLOY = `0x7f${'cd'.repeat(32)}60006000a160006000f3`;
const DEV_ACCOUNT = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';

/**
 * A Bor-like node in front of anvil (test-only): relays every call, adds `totalDifficulty` to
 * block answers (Bor reports it; anvil no longer does) and can answer late (`delayMs`).
 */
async function startBorLikeUpstream(
  target: string,
): Promise<{ url: string; delayMs: number; close(): Promise<void> }> {
  const state = { delayMs: 0 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const answer = await fetch(target, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: Buffer.concat(chunks),
      });
      const parsed = (await answer.json()) as unknown;
      const withTd = (item: { result?: { number?: string; hash?: string } }) => {
        const r = item.result;
        if (r && typeof r === 'object' && typeof r.number === 'string' && 'hash' in r)
          Object.assign(r, { totalDifficulty: `0x${(BigInt(r.number) * 2n + 1n).toString(16)}` });
        return item;
      };
      const out = JSON.stringify(
        Array.isArray(parsed) ? parsed.map(withTd) : withTd(parsed as never),
      );
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(out);
      }, state.delayMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    get delayMs() {
      return state.delayMs;
    },
    set delayMs(ms: number) {
      state.delayMs = ms;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe('rpc-gateway limits, filters and BorApi edge cases', () => {
  let eth: AnvilInstance;
  let polygon: AnvilInstance;
  let bor: Awaited<ReturnType<typeof startBorLikeUpstream>>;
  let ns: Awaited<ReturnType<typeof provisionNamespace>>;
  let gateway: RunningGateway;

  beforeAll(async () => {
    [eth, polygon, ns] = await Promise.all([
      startAnvil({ chainId: 1 }),
      startAnvil({ chainId: 137 }),
      provisionNamespace(),
    ]);
    bor = await startBorLikeUpstream(polygon.url);
    gateway = await startGateway(gatewayEnv());
  });

  /** One replica's settings: every replica of an endpoint has the same FILTER_ID_KEY. */
  const gatewayEnv = () => ({
    REGION: 'eu',
    NATS_URL: ns.url,
    NATS_PREFIX: ns.prefix,
    UPSTREAMS: JSON.stringify({ 'eth-mainnet': [eth.url], 'polygon-mainnet': [bor.url] }),
    WS_MAX_SUBSCRIPTIONS_PER_CONNECTION: '100',
    WS_MAX_SUBSCRIPTIONS_PER_ACCOUNT: '2',
    WS_MAX_BUFFERED_BYTES: '1024',
    STATIC_ACCESS_TOKENS: JSON.stringify({
      [TOKENS.eth]: { accountId: 'acct-lim', network: 'eth-mainnet', planId: 'pro' },
      [TOKENS.polygon]: { accountId: 'acct-lim-p', network: 'polygon-mainnet', planId: 'pro' },
      [TOKENS.otherEth]: { accountId: 'acct-lim-2', network: 'eth-mainnet', planId: 'pro' },
    }),
    FILTER_ID_KEY: 'filter-id-key-of-the-limits-suite-0001',
  });

  afterAll(async () => {
    await gateway?.stop();
    await bor?.close();
    await Promise.all([eth?.stop(), polygon?.stop(), ns?.cleanup()]);
  });

  const url = (token: string) => `${gateway.url}/${token}/`;
  const wsUrl = (token: string) => `ws://127.0.0.1:${gateway.port}/${token}/`;
  const result = async (method: string, params: unknown[], token = TOKENS.eth) => {
    const a = await rpc(url(token), { jsonrpc: '2.0', id: 1, method, params });
    return a.json as { result?: unknown; error?: { code: number; message: string } };
  };

  it('eth_getFilterLogs answers the logs of a filter created through the gateway; unknown ids → -32000', async () => {
    const filter = await result('eth_newFilter', [{ fromBlock: '0x0', topics: [TOPIC] }]);
    expect(typeof filter.result).toBe('string');
    // The log comes from a transaction sent to the node itself (anvil's unlocked dev account).
    // eth_sendTransaction answers once the transaction is in the pool and anvil's auto-miner
    // mines it in the background, so logs read right after could miss it (measured: ~1 in 12
    // direct reads). eth_sendTransactionSync (EIP-7966) answers with the receipt of the mined
    // transaction, so its log is in the chain before the filter is read.
    const sent = await fetch(eth.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'eth_sendTransactionSync',
        params: [{ from: DEV_ACCOUNT, data: LOG_DEPLOY }],
      }),
    });
    const receipt = ((await sent.json()) as { result?: Record<string, unknown> }).result;
    expect(receipt).toMatchObject({ status: '0x1', logs: [{ topics: [TOPIC] }] });
    const logs = await result('eth_getFilterLogs', [filter.result]);
    expect(logs.error).toBeUndefined();
    expect(logs.result).toEqual([
      expect.objectContaining({
        topics: [TOPIC],
        transactionHash: receipt?.transactionHash,
        blockNumber: receipt?.blockNumber,
      }),
    ]);
    const unknown = await result('eth_getFilterLogs', ['0xdeadbeef']);
    expect(unknown.error?.code).toBe(-32000);
  });

  it.each([
    ['eth_newFilter', [{ fromBlock: 'latest' }]],
    ['eth_newBlockFilter', []],
    ['eth_newPendingTransactionFilter', []],
  ])(
    '%s: the filter belongs to its account; another account gets the answer of an unknown id, on any replica',
    async (create, params) => {
      const replica = await startGateway(gatewayEnv());
      try {
        const made = await result(create, params);
        expect(made.error).toBeUndefined();
        const id = made.result as string;
        // An id of the same form that no one was given: its last digit changed.
        const unknownId = `${id.slice(0, -1)}${id.endsWith('0') ? '1' : '0'}`;
        for (const at of [gateway.url, replica.url])
          for (const method of [
            'eth_getFilterChanges',
            'eth_getFilterLogs',
            'eth_uninstallFilter',
          ]) {
            const ask = (filterId: string) =>
              rpc(`${at}/${TOKENS.otherEth}/`, {
                jsonrpc: '2.0',
                id: 7,
                method,
                params: [filterId],
              });
            const other = await ask(id);
            const unknown = await ask(unknownId);
            // A node's answers for a filter it does not have; uninstall: nothing removed.
            expect(other.json).toEqual(
              method === 'eth_uninstallFilter'
                ? { jsonrpc: '2.0', id: 7, result: false }
                : { jsonrpc: '2.0', id: 7, error: { code: -32000, message: 'filter not found' } },
            );
            // Indistinguishable from an id no filter has: status, body, every byte.
            expect([other.status, other.text]).toEqual([unknown.status, unknown.text]);
          }
        // Its own account reads and removes it on the other replica (same key, stateless).
        const mine = (method: string) =>
          rpc(`${replica.url}/${TOKENS.eth}/`, { jsonrpc: '2.0', id: 8, method, params: [id] });
        expect(((await mine('eth_getFilterChanges')).json as { result?: unknown }).result).toEqual(
          expect.any(Array),
        );
        expect(((await mine('eth_uninstallFilter')).json as { result?: unknown }).result).toBe(
          true,
        );
        // The node's own answer for the filter it dropped: the same words as the gateway's.
        expect((await mine('eth_getFilterChanges')).json).toEqual({
          jsonrpc: '2.0',
          id: 8,
          error: { code: -32000, message: 'filter not found' },
        });
        // QA: removed again, the node's `false`; a foreign id was -32000. Now both false.
        expect((await mine('eth_uninstallFilter')).json).toEqual({
          jsonrpc: '2.0',
          id: 8,
          result: false,
        });
        // A filter call without one string id is invalid params, not "filter not found".
        for (const params of [[], [123]])
          expect(
            (
              await rpc(`${replica.url}/${TOKENS.eth}/`, {
                jsonrpc: '2.0',
                id: 9,
                method: 'eth_uninstallFilter',
                params,
              })
            ).json,
          ).toMatchObject({ id: 9, error: { code: -32602 } });
      } finally {
        await replica.stop();
      }
    },
  );

  it('a body over the 5 MiB limit → 413 with a JSON-RPC error object (id null, -32005) and the request id', async () => {
    const answer = await rpc(url(TOKENS.eth), `"${'x'.repeat(5 * 1024 * 1024 + 10)}"`, {
      'x-request-id': 'big-body-1',
    });
    expect(answer.status).toBe(413);
    expect(answer.headers.get('x-request-id')).toBe('big-body-1');
    expect(answer.json).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32005, message: 'limit exceeded: the request body is larger than 5 MiB' },
    });
    // The connection is still good for the next call.
    expect((await result('eth_chainId', [])).result).toBe('0x1');
  });

  it('per-account subscription limit: counted across connections of the account → -32005', async () => {
    const open = async () => {
      const ws = new WebSocket(wsUrl(TOKENS.eth));
      await new Promise((r) => ws.once('open', r));
      const answers = new Map<number, { result?: unknown; error?: { code: number } }>();
      ws.on('message', (d) => {
        const m = JSON.parse(d.toString()) as { id?: number; result?: unknown };
        if (m.id !== undefined) answers.set(m.id, m);
      });
      const ask = async (id: number, params: unknown[], method = 'eth_subscribe') => {
        ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
        while (!answers.has(id)) await new Promise((r) => setTimeout(r, 10));
        return answers.get(id)!;
      };
      return { ws, ask };
    };
    const a = await open();
    const b = await open();
    expect(typeof (await a.ask(1, ['newHeads'])).result).toBe('string');
    const second = await b.ask(1, ['newHeads']);
    expect(typeof second.result).toBe('string');
    expect((await b.ask(2, ['newHeads'])).error?.code).toBe(-32005);
    expect((await a.ask(2, ['logs', {}])).error?.code).toBe(-32005);
    // Freeing one makes room again.
    expect((await b.ask(3, [second.result], 'eth_unsubscribe')).result).toBe(true);
    expect(typeof (await a.ask(3, ['newHeads'])).result).toBe('string');
    a.ws.close();
    b.ws.close();
    // Closed connections give their subscriptions back.
    const deadline = Date.now() + 5_000;
    let c = await open();
    while (Date.now() < deadline) {
      const answer = await c.ask(1, ['newHeads']);
      if (typeof answer.result === 'string') break;
      c.ws.close();
      await new Promise((r) => setTimeout(r, 100));
      c = await open();
    }
    expect(typeof (await c.ask(2, ['newHeads'])).result).toBe('string');
    c.ws.close();
  });

  it('a WebSocket client that does not read is cut off instead of buffered without bound', async () => {
    const before = await metricValue(gateway.url, 'rpc_gateway_ws_slow_clients_cut_total', {});
    const ws = new WebSocket(wsUrl(TOKENS.eth));
    await new Promise((r) => ws.once('open', r));
    const closed = new Promise<void>((r) => ws.once('close', () => r()));
    // Stop reading: the kernel buffers fill, then the gateway's own send buffer grows.
    (ws as unknown as { _socket: Socket })._socket.pause();
    // Answers of ~1 MiB each (ids are echoed as sent), all answered locally.
    const id = JSON.stringify('x'.repeat(10_000));
    const batch = `[${Array.from({ length: 100 }, () => `{"jsonrpc":"2.0","id":${id},"method":"eth_chainId"}`).join(',')}]`;
    let cut = 0;
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      if (ws.readyState === WebSocket.OPEN) ws.send(batch);
      await new Promise((r) => setTimeout(r, 20));
      cut = await metricValue(gateway.url, 'rpc_gateway_ws_slow_clients_cut_total', {});
      if (cut > before) break;
    }
    expect(cut).toBe(before + 1);
    (ws as unknown as { _socket: Socket })._socket.resume();
    await closed;
  }, 60_000);

  describe('BorApi gRPC', () => {
    const proto = { bor: { BorApi: borApiClientClass() } };
    const callBor = (method: string, request: unknown, deadlineMs?: number) =>
      new Promise<{ error: ServiceError | null; response: unknown }>((resolve) => {
        const client = new proto.bor.BorApi(
          `127.0.0.1:${gateway.grpcPort}`,
          credentials.createInsecure(),
        );
        const md = new Metadata();
        md.set('x-access-token', TOKENS.polygon);
        const options = deadlineMs === undefined ? {} : { deadline: Date.now() + deadlineMs };
        client[method]!(request, md, options, (error, response) => {
          client.close();
          resolve({ error, response });
        });
      });

    it('GetTdByNumber and GetTdByHash from a node that reports totalDifficulty', async () => {
      await fetch(polygon.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"jsonrpc":"2.0","id":1,"method":"anvil_mine","params":["0x3"]}',
      });
      const byNumber = await callBor('GetTdByNumber', { number: '2' });
      expect(byNumber.error).toBeNull();
      expect((byNumber.response as { totalDifficulty: string }).totalDifficulty).toBe('5');
      const block = (await (
        await fetch(polygon.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":["0x3",false]}',
        })
      ).json()) as { result: { hash: string } };
      const byHash = await callBor('GetTdByHash', { hash: toH256(block.result.hash) });
      expect(byHash.error).toBeNull();
      expect((byHash.response as { totalDifficulty: string }).totalDifficulty).toBe('7');
    });

    it('DEADLINE_EXCEEDED when the node answers after the client deadline', async () => {
      bor.delayMs = 1_000;
      try {
        const late = await callBor('HeaderByNumber', { number: 'latest' }, 200);
        expect(late.error?.code).toBe(status.DEADLINE_EXCEEDED);
        // The same call with time to spare succeeds.
        const onTime = await callBor('HeaderByNumber', { number: 'latest' }, 10_000);
        expect(onTime.error).toBeNull();
      } finally {
        bor.delayMs = 0;
      }
    });
  });
});

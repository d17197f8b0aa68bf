import WebSocket from 'ws';
import { startAnvil, type AnvilInstance } from '@meridian/testing';
import { provisionNamespace, rpc, startGateway, type RunningGateway } from './gateway-harness';

/**
 * The shape of a JSON-RPC request as the gateway reads it (`parseRequest`, @meridian/jsonrpc),
 * over HTTP, in a batch and over WebSocket alike (QA: `"params": null`, which go-ethereum and
 * anvil take as no params, was -32600 here).
 */
const TOKEN = 'tok_shape_eth_000001';

type Answer = { id?: unknown; result?: unknown; error?: { code: number; message: string } };

describe('rpc-gateway: the request shape', () => {
  let node: AnvilInstance;
  let ns: Awaited<ReturnType<typeof provisionNamespace>>;
  let gateway: RunningGateway;

  beforeAll(async () => {
    [node, ns] = await Promise.all([startAnvil({ chainId: 1 }), provisionNamespace()]);
    gateway = await startGateway({
      REGION: 'eu',
      NATS_URL: ns.url,
      NATS_PREFIX: ns.prefix,
      GRPC_ENABLED: 'false',
      UPSTREAMS: JSON.stringify({ 'eth-mainnet': [node.url] }),
      STATIC_ACCESS_TOKENS: JSON.stringify({
        [TOKEN]: { accountId: 'acct-shape', network: 'eth-mainnet', planId: 'pro' },
      }),
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([node?.stop(), ns?.cleanup()]);
  });

  const url = () => `${gateway.url}/${TOKEN}/`;
  const nullParams = (id: number, method = 'eth_blockNumber') => ({
    jsonrpc: '2.0',
    id,
    method,
    params: null,
  });

  async function overWebSocket(messages: unknown[]): Promise<unknown[]> {
    const ws = new WebSocket(`ws://127.0.0.1:${gateway.port}/${TOKEN}`);
    const answers: unknown[] = [];
    try {
      await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
      const all = new Promise<void>((resolve) =>
        ws.on('message', (data) => {
          answers.push(JSON.parse(data.toString()));
          if (answers.length === messages.length) resolve();
        }),
      );
      for (const message of messages) ws.send(JSON.stringify(message));
      await all;
      return answers;
    } finally {
      ws.close();
    }
  }

  describe('"params": null is no params, as go-ethereum and anvil take it', () => {
    it('over HTTP, alone and in a batch: the node answers', async () => {
      const head = (await rpc(node.url, nullParams(1))).json as Answer;
      expect(head.result).toMatch(/^0x[0-9a-f]+$/);

      const alone = await rpc(url(), nullParams(1));
      expect(alone.status).toBe(200);
      expect(alone.json).toEqual({ jsonrpc: '2.0', id: 1, result: head.result });

      const batch = await rpc(url(), [nullParams(2), nullParams(3, 'eth_gasPrice')]);
      const answers = batch.json as Answer[];
      expect(answers.map((a) => [a.id, typeof a.result, a.error])).toEqual([
        [2, 'string', undefined],
        [3, 'string', undefined],
      ]);
    });

    it('over WebSocket, alone and in a batch', async () => {
      const [alone, batch] = (await overWebSocket([
        nullParams(4),
        [nullParams(5), nullParams(6, 'eth_chainId')],
      ])) as [Answer, Answer[]];
      expect([alone.id, typeof alone.result, alone.error]).toEqual([4, 'string', undefined]);
      expect(batch).toEqual([
        { jsonrpc: '2.0', id: 5, result: expect.stringMatching(/^0x/) },
        { jsonrpc: '2.0', id: 6, result: '0x1' },
      ]);
    });

    it('other scalars are still not params: -32600', async () => {
      const answer = await rpc(url(), {
        jsonrpc: '2.0',
        id: 7,
        method: 'eth_blockNumber',
        params: 5,
      });
      expect((answer.json as Answer).error?.code).toBe(-32600);
    });
  });

  // QA: "Invalid params: …" beside "invalid params: …", "Invalid Request" for deeply nested JSON,
  // and `the method "rpc.discover"` quoted where other method names were not.
  it('error messages: one style, lower case, method names as written', async () => {
    const batch = await rpc(url(), [
      { jsonrpc: '1.0', id: 1, method: 'eth_blockNumber' },
      { jsonrpc: '2.0', id: 2, method: 'eth_blockNumber', params: { a: 1 } },
      { jsonrpc: '2.0', id: 3, method: 'rpc.discover', params: [] },
      { jsonrpc: '2.0', id: 4, method: 'eth_notAMethod', params: [] },
      { jsonrpc: '2.0', id: 5, method: 'eth_blockNumber', params: 5 },
    ]);
    expect((batch.json as Answer[]).map((a) => [a.error?.code, a.error?.message])).toEqual([
      [-32600, 'invalid request: "jsonrpc" must be "2.0"'],
      [-32602, 'invalid params: "params" must be an array, null or omitted'],
      [-32601, 'the method rpc.discover does not exist/is not available on eth-mainnet'],
      [-32601, 'the method eth_notAMethod does not exist/is not available on eth-mainnet'],
      // QA: a scalar said `"params" must be an array, null or omitted`, an object `params must
      // be an array`; both say the former now, each under its own code.
      [-32600, 'invalid request: "params" must be an array, null or omitted'],
    ]);

    const depth = 10_000;
    const nested = await rpc(url(), '['.repeat(depth) + ']'.repeat(depth));
    expect(nested.json).toEqual([
      {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: 'invalid request: not an object' },
      },
    ]);
    const notJson = await rpc(url(), '{"jsonrpc":');
    expect(notJson.json).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: 'parse error' },
    });
    const tooMany = await rpc(
      url(),
      Array.from({ length: 101 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'eth_chainId' })),
    );
    expect((tooMany.json as Answer).error?.message).toBe(
      'limit exceeded: batch of 101 requests exceeds the limit of 100',
    );
  });
});

import { startAnvil, type AnvilInstance } from '@meridian/testing';
import { credentials, Metadata, status, type ServiceError } from '@grpc/grpc-js';
import WebSocket from 'ws';
import {
  metricValue,
  provisionNamespace,
  startGateway,
  type RunningGateway,
  borApiClientClass,
} from './gateway-harness';

const TOKENS = {
  /** Network P on the Free plan: 20 RPS, a bucket of 20. */
  polygonFree: 'tok_acct_polygon_free1',
  polygon: 'tok_acct_polygon_pro01',
  eth: 'tok_acct_eth_pro_0001',
};

/**
 * What a customer's call takes from the plan and is billed, on the paths a QA round found
 * wrong: a gRPC method of many node calls takes a token per call (as an HTTP batch does), one
 * GetAuthor is billed once on a non-Bor node, and WebSocket subscription calls the gateway
 * refuses are -32602 and unbilled, alike for identical calls sent at once.
 */
describe('rpc-gateway: tokens and CU per customer call (gRPC multi-call, GetAuthor, WebSocket)', () => {
  let eth: AnvilInstance;
  let polygon: AnvilInstance;
  let ns: Awaited<ReturnType<typeof provisionNamespace>>;
  let gateway: RunningGateway;

  beforeAll(async () => {
    [eth, polygon, ns] = await Promise.all([
      startAnvil({ chainId: 1 }),
      startAnvil({ chainId: 137 }),
      provisionNamespace(),
    ]);
    // 100 blocks for GetBlockInfoInBatch 1..100.
    await fetch(polygon.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":1,"method":"anvil_mine","params":["0x64"]}',
    });
    gateway = await startGateway({
      REGION: 'eu',
      NATS_URL: ns.url,
      NATS_PREFIX: ns.prefix,
      UPSTREAMS: JSON.stringify({ 'eth-mainnet': [eth.url], 'polygon-mainnet': [polygon.url] }),
      STATIC_ACCESS_TOKENS: JSON.stringify({
        [TOKENS.polygonFree]: {
          accountId: 'acct-free',
          network: 'polygon-mainnet',
          planId: 'free',
        },
        [TOKENS.polygon]: { accountId: 'acct-pro', network: 'polygon-mainnet', planId: 'pro' },
        [TOKENS.eth]: { accountId: 'acct-eth', network: 'eth-mainnet', planId: 'pro' },
      }),
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([eth?.stop(), polygon?.stop(), ns?.cleanup()]);
  });

  const cu = (network: string) =>
    metricValue(gateway.url, 'rpc_gateway_usage_cu_total', { network });

  describe('BorApi gRPC', () => {
    const proto = { bor: { BorApi: borApiClientClass() } };
    const callBor = (
      client: InstanceType<typeof proto.bor.BorApi>,
      method: string,
      request: unknown,
      token: string,
    ) =>
      new Promise<{ error: ServiceError | null; response: unknown }>((resolve) => {
        const md = new Metadata();
        md.set('x-access-token', token);
        client[method]!(request, md, (error, response) => resolve({ error, response }));
      });
    let client: InstanceType<typeof proto.bor.BorApi>;
    beforeAll(() => {
      client = new proto.bor.BorApi(`127.0.0.1:${gateway.grpcPort}`, credentials.createInsecure());
    });
    afterAll(() => client?.close());

    it('GetBlockInfoInBatch takes one plan-RPS token per block, as an HTTP batch: on Free (20 RPS) 5 batches of 100 at once are 1 answered, 4 RESOURCE_EXHAUSTED', async () => {
      // QA: all 5 answered in 0.52 s (500 node calls billed); 15 at once, ~1,100 calls.
      const before = await cu('polygon-mainnet');
      const outcomes = await Promise.all(
        Array.from({ length: 5 }, () =>
          callBor(
            client,
            'GetBlockInfoInBatch',
            { startBlockNumber: 1, endBlockNumber: 100 },
            TOKENS.polygonFree,
          ),
        ),
      );
      const answered = outcomes.filter((o) => o.error === null);
      expect(answered).toHaveLength(1);
      expect((answered[0]!.response as { blocks: unknown[] }).blocks).toHaveLength(100);
      const refused = outcomes.filter((o) => o.error !== null);
      expect(refused).toHaveLength(4);
      for (const { error } of refused) {
        expect(error!.code).toBe(status.RESOURCE_EXHAUSTED);
        expect(error!.details).toMatch(/^rate limit exceeded/);
      }
      // The one answered batch: 100 calls at 20 CU; the refused ones nothing.
      expect((await cu('polygon-mainnet')) - before).toBe(100 * 20);
      // The batch larger than the bucket left debt (ADR 0102): the next call is refused too.
      const next = await callBor(client, 'HeaderByNumber', { number: '0x1' }, TOKENS.polygonFree);
      expect(next.error?.code).toBe(status.RESOURCE_EXHAUSTED);
    });

    it('GetAuthor on a non-Bor node is billed once (20 CU): the -32601 of bor_getAuthor is not billed, the fallback takes no second token', async () => {
      const before = await cu('polygon-mainnet');
      const author = await callBor(client, 'GetAuthor', { number: '0x1' }, TOKENS.polygon);
      expect(author.error).toBeNull();
      expect(author.response).toHaveProperty('author');
      // QA: 40 CU (the failed bor_getAuthor try, then eth_getBlockByNumber).
      expect((await cu('polygon-mainnet')) - before).toBe(20);
    });

    it('a Bor-only method a non-Bor node does not implement (-32601) is UNIMPLEMENTED and not billed', async () => {
      // QA: GetRootHash and BorBlockReceipt on anvil each billed 20 CU for "not implemented".
      const before = await cu('polygon-mainnet');
      const root = await callBor(
        client,
        'GetRootHash',
        { startBlockNumber: 1, endBlockNumber: 2 },
        TOKENS.polygon,
      );
      expect(root.error?.code).toBe(status.UNIMPLEMENTED);
      const receipt = await callBor(
        client,
        'BorBlockReceipt',
        { hash: { Hi: { Hi: 1, Lo: 2 }, Lo: { Hi: 3, Lo: 4 } } },
        TOKENS.polygon,
      );
      expect(receipt.error?.code).toBe(status.UNIMPLEMENTED);
      expect((await cu('polygon-mainnet')) - before).toBe(0);
    });
  });

  describe('WebSocket subscription calls the gateway refuses', () => {
    const session = async () => {
      const ws = new WebSocket(`ws://127.0.0.1:${gateway.port}/${TOKENS.eth}/`);
      await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
      type Answer = { id?: number; result?: unknown; error?: { code: number } };
      const answers = new Map<number, Answer>();
      const waiting = new Map<number, () => void>();
      ws.on('message', (data) => {
        const message = JSON.parse(data.toString()) as Answer;
        if (typeof message.id !== 'number') return;
        answers.set(message.id, message);
        waiting.get(message.id)?.();
      });
      const answerOf = (id: number) =>
        answers.has(id)
          ? Promise.resolve(answers.get(id)!)
          : new Promise<Answer>((resolve) => waiting.set(id, () => resolve(answers.get(id)!)));
      return { ws, answerOf };
    };

    it('identical bad eth_subscribe sent at once are all -32602, unbilled; so is a filter nested 200,000 deep', async () => {
      const { ws, answerOf } = await session();
      const before = await cu('eth-mainnet');
      // QA: with 100 at once, 93 got -32000 "upstream node unavailable".
      const ids = Array.from({ length: 100 }, (_, i) => i + 1);
      for (const id of ids)
        ws.send(
          JSON.stringify({
            jsonrpc: '2.0',
            id,
            method: 'eth_subscribe',
            params: ['logs', { address: '0x12' }],
          }),
        );
      // QA deep6.json: topics nested 200,000 lists deep.
      ws.send(
        `{"jsonrpc":"2.0","id":1000,"method":"eth_subscribe","params":["logs",{"topics":${'['.repeat(200_000)}${']'.repeat(200_000)}}]}`,
      );
      const codes = await Promise.all([...ids, 1000].map((id) => answerOf(id)));
      expect(codes.map((a) => a.error?.code)).toEqual(Array(101).fill(-32602));
      expect((await cu('eth-mainnet')) - before).toBe(0);
      ws.close();
    });

    it('eth_unsubscribe with malformed params is -32602 and unbilled; an unknown id is false, billed', async () => {
      const { ws, answerOf } = await session();
      const before = await cu('eth-mainnet');
      // QA: each answered {"result":false} and billed 20 CU.
      ws.send('{"jsonrpc":"2.0","id":1,"method":"eth_unsubscribe","params":[]}');
      ws.send('{"jsonrpc":"2.0","id":2,"method":"eth_unsubscribe","params":[123,{"x":1}]}');
      ws.send('{"jsonrpc":"2.0","id":3,"method":"eth_unsubscribe"}');
      for (const id of [1, 2, 3]) expect((await answerOf(id)).error?.code).toBe(-32602);
      expect((await cu('eth-mainnet')) - before).toBe(0);
      ws.send('{"jsonrpc":"2.0","id":4,"method":"eth_unsubscribe","params":["0xabc"]}');
      expect((await answerOf(4)).result).toBe(false);
      expect((await cu('eth-mainnet')) - before).toBe(20);
      ws.close();
    });
  });
});

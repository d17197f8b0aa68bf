import { startAnvil, type AnvilInstance } from '@meridian/testing';
import { credentials, Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { createPublicClient, createWalletClient, http, webSocket, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import WebSocket from 'ws';
import {
  metricValue,
  provisionNamespace,
  startGateway,
  type RunningGateway,
  borApiClientClass,
} from './gateway-harness';

const KEY_0 = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80' as Hex;
const TOPIC = `0x${'cd'.repeat(32)}`;
const LOG_DEPLOY = `0x7f${'cd'.repeat(32)}60006000a160006000f3` as Hex;
const TOKENS = {
  eth: 'tok_ws_eth_0000000001',
  polygon: 'tok_ws_polygon_000001',
  opbnb: 'tok_ws_opbnb_00000001',
  /** Network P, an account with a plan whose CU are spent (balance state exhausted). */
  polygonSpent: 'tok_grpc_spent_000001',
  /** Network P, a team without a plan and no CU: billing-ledger publishes it exhausted too. */
  polygonNoPlan: 'tok_grpc_no_plan_0001',
};

describe('rpc-gateway WebSocket and BorApi gRPC', () => {
  let eth: AnvilInstance;
  let ethSpare: AnvilInstance;
  let polygon: AnvilInstance;
  let ns: Awaited<ReturnType<typeof provisionNamespace>>;
  let gateway: RunningGateway;

  beforeAll(async () => {
    [eth, ethSpare, polygon, ns] = await Promise.all([
      startAnvil({ chainId: 1 }),
      startAnvil({ chainId: 1 }),
      startAnvil({ chainId: 137 }),
      provisionNamespace(),
    ]);
    gateway = await startGateway({
      REGION: 'eu',
      NATS_URL: ns.url,
      NATS_PREFIX: ns.prefix,
      UPSTREAMS: JSON.stringify({
        'eth-mainnet': [eth.url, ethSpare.url],
        'polygon-mainnet': [polygon.url],
      }),
      WS_MAX_SUBSCRIPTIONS_PER_CONNECTION: '3',
      STATIC_ACCESS_TOKENS: JSON.stringify({
        [TOKENS.eth]: { accountId: 'acct-ws', network: 'eth-mainnet', planId: 'pro' },
        [TOKENS.polygon]: { accountId: 'acct-grpc', network: 'polygon-mainnet', planId: 'pro' },
        [TOKENS.opbnb]: { accountId: 'acct-opbnb', network: 'opbnb-mainnet', planId: 'pro' },
        [TOKENS.polygonSpent]: {
          accountId: 'acct-grpc-spent',
          network: 'polygon-mainnet',
          planId: 'pro',
          status: 'exhausted',
        },
        [TOKENS.polygonNoPlan]: {
          accountId: 'acct-grpc-no-plan',
          network: 'polygon-mainnet',
          planId: null,
          status: 'exhausted',
        },
      }),
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([eth?.stop(), ethSpare?.stop(), polygon?.stop(), ns?.cleanup()]);
  });

  const wsUrl = (token: string) => `ws://127.0.0.1:${gateway.port}/${token}/`;
  const mine = (node: AnvilInstance) =>
    fetch(node.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":1,"method":"evm_mine","params":[]}',
    });

  it('viem webSocket transport: plain calls, newHeads and logs subscriptions; many clients share one upstream subscription', async () => {
    // Ten clients on ten connections, as ten dApps would be: viem shares one socket among the
    // clients of one URL and options (its cache key includes keepAlive), and one connection may
    // hold only WS_MAX_SUBSCRIPTIONS_PER_CONNECTION (3 here) subscriptions.
    const clients = Array.from({ length: 10 }, (_, i) =>
      createPublicClient({
        transport: webSocket(wsUrl(TOKENS.eth), { keepAlive: { interval: 30_000 + i } }),
      }),
    );
    expect(await clients[0]!.getChainId()).toBe(1);
    expect(await clients[0]!.getBlockNumber()).toBeGreaterThanOrEqual(0n);
    const heads: bigint[][] = clients.map(() => []);
    const unwatch = clients.map((c, i) =>
      c.watchBlockNumber({
        emitOnBegin: false,
        onBlockNumber: (n) => heads[i]!.push(n),
      }),
    );
    const logs: string[] = [];
    const unwatchLogs = clients[1]!.watchEvent({
      onLogs: (l) => logs.push(...l.map((x) => x.topics[0] as string)),
      poll: false,
    });
    await new Promise((r) => setTimeout(r, 500));
    expect(
      await metricValue(gateway.url, 'rpc_gateway_upstream_subscriptions', {
        network: 'eth-mainnet',
        type: 'newHeads',
      }),
    ).toBe(1);
    expect(
      await metricValue(gateway.url, 'rpc_gateway_client_subscriptions', {
        network: 'eth-mainnet',
        type: 'newHeads',
      }),
    ).toBe(10);
    // The shared upstream subscription lives on one of the two nodes: emit the log on both.
    for (const node of [eth, ethSpare]) {
      const wallet = createWalletClient({
        account: privateKeyToAccount(KEY_0),
        transport: http(node.url),
        chain: {
          id: 1,
          name: 'e',
          nativeCurrency: { name: 'E', symbol: 'E', decimals: 18 },
          rpcUrls: { default: { http: [node.url] } },
        },
      });
      await wallet.sendTransaction({ data: LOG_DEPLOY });
    }
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline && (heads.some((h) => h.length === 0) || logs.length === 0))
      await new Promise((r) => setTimeout(r, 50));
    expect(heads.every((h) => h.length > 0)).toBe(true);
    expect(logs.length).toBeGreaterThan(0);
    unwatch.forEach((u) => u());
    unwatchLogs();
    await Promise.all(
      clients.map((c) =>
        (c.transport as { getRpcClient?: () => Promise<{ close(): void }> })
          .getRpcClient?.()
          .then((r) => r.close()),
      ),
    );
    expect(logs.every((t) => t === TOPIC)).toBe(true);
  });

  it('raw WebSocket: eth_subscribe logs with a filter, per-connection limit, eth_unsubscribe, invalid type', async () => {
    const ws = new WebSocket(wsUrl(TOKENS.eth));
    await new Promise((r) => ws.once('open', r));
    const answers = new Map<number, { result?: unknown; error?: { code: number } }>();
    const notes: unknown[] = [];
    ws.on('message', (d) => {
      const m = JSON.parse(d.toString());
      if (m.method === 'eth_subscription') notes.push(m.params);
      else answers.set(m.id, m);
    });
    const ask = async (id: number, method: string, params: unknown[]) => {
      ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
      while (!answers.has(id)) await new Promise((r) => setTimeout(r, 10));
      return answers.get(id)!;
    };
    expect((await ask(1, 'eth_subscribe', ['nope'])).error?.code).toBe(-32602);
    const a = await ask(2, 'eth_subscribe', ['logs', { topics: [TOPIC] }]);
    expect(typeof a.result).toBe('string');
    await ask(3, 'eth_subscribe', ['newHeads']);
    await ask(4, 'eth_subscribe', ['newPendingTransactions']);
    expect((await ask(5, 'eth_subscribe', ['newHeads'])).error?.code).toBe(-32005);
    expect((await ask(6, 'eth_unsubscribe', [a.result])).result).toBe(true);
    expect((await ask(7, 'eth_unsubscribe', [a.result])).result).toBe(false);
    ws.close();
  });

  it('per-connection limit holds for eth_subscribe frames sent at once, without waiting for answers', async () => {
    const ws = new WebSocket(wsUrl(TOKENS.eth));
    await new Promise((r) => ws.once('open', r));
    const answers: { id: number; result?: unknown; error?: { code: number } }[] = [];
    ws.on('message', (d) => {
      const m = JSON.parse(d.toString());
      if (m.id !== undefined) answers.push(m);
    });
    // WS_MAX_SUBSCRIPTIONS_PER_CONNECTION is 3 here; 8 frames in one write burst.
    for (let id = 1; id <= 8; id++)
      ws.send(
        JSON.stringify({ jsonrpc: '2.0', id, method: 'eth_subscribe', params: ['newHeads'] }),
      );
    const deadline = Date.now() + 10_000;
    while (answers.length < 8 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(answers.filter((a) => typeof a.result === 'string')).toHaveLength(3);
    expect(answers.filter((a) => a.error?.code === -32005)).toHaveLength(5);
    ws.close();
  });

  it('resubscribes on another node when the upstream WebSocket dies; clients keep their ids', async () => {
    const ws = new WebSocket(wsUrl(TOKENS.eth));
    await new Promise((r) => ws.once('open', r));
    const heads: unknown[] = [];
    let subId: string | undefined;
    ws.on('message', (d) => {
      const m = JSON.parse(d.toString());
      if (m.method === 'eth_subscription') heads.push(m.params.subscription);
      else subId = m.result;
    });
    ws.send('{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}');
    while (!subId) await new Promise((r) => setTimeout(r, 10));
    await eth.stop();
    await new Promise((r) => setTimeout(r, 1_000));
    await mine(ethSpare);
    const deadline = Date.now() + 8_000;
    while (Date.now() < deadline && heads.length === 0) {
      await mine(ethSpare);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(heads.length).toBeGreaterThan(0);
    expect(heads.every((h) => h === subId)).toBe(true);
    ws.close();
  });

  it('WebSocket upgrade refused with 401 for an unknown token', async () => {
    const ws = new WebSocket(wsUrl('tok_unknown_unknown'));
    const status = await new Promise<number>((resolve) =>
      ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)),
    );
    expect(status).toBe(401);
  });

  describe('BorApi gRPC (plain @grpc/grpc-js client from the proto)', () => {
    const proto = { bor: { BorApi: borApiClientClass() } };
    const callBor = (method: string, request: unknown, token?: string) =>
      new Promise<{ error: ServiceError | null; response: unknown }>((resolve) => {
        const client = new proto.bor.BorApi(
          `127.0.0.1:${gateway.grpcPort}`,
          credentials.createInsecure(),
        );
        const md = new Metadata();
        if (token) md.set('x-access-token', token);
        client[method]!(request, md, (error, response) => {
          client.close();
          resolve({ error, response });
        });
      });

    it('HeaderByNumber, BlockByNumber, GetAuthor, GetBlockInfoInBatch, TransactionReceipt', async () => {
      const header = await callBor('HeaderByNumber', { number: 'latest' }, TOKENS.polygon);
      expect(header.error).toBeNull();
      expect((header.response as { header: { number: string } }).header.number).toMatch(/^[0-9]+$/);
      const block = await callBor('BlockByNumber', { number: '0' }, TOKENS.polygon);
      expect(
        (block.response as { block: { header: { number: string } } }).block.header.number,
      ).toBe('0');
      const author = await callBor('GetAuthor', { number: '0x0' }, TOKENS.polygon);
      expect(author.error).toBeNull();
      const batch = await callBor(
        'GetBlockInfoInBatch',
        { startBlockNumber: 0, endBlockNumber: 0 },
        TOKENS.polygon,
      );
      expect((batch.response as { blocks: unknown[] }).blocks).toHaveLength(1);
      const receipt = await callBor(
        'TransactionReceipt',
        { hash: { Hi: { Hi: 1, Lo: 2 }, Lo: { Hi: 3, Lo: 4 } } },
        TOKENS.polygon,
      );
      expect(receipt.error?.code).toBe(status.NOT_FOUND);
    });

    it.each([
      [
        'UNAUTHENTICATED without x-access-token',
        'HeaderByNumber',
        { number: 'latest' },
        undefined,
        status.UNAUTHENTICATED,
      ],
      [
        'PERMISSION_DENIED for a token of a network without gRPC',
        'HeaderByNumber',
        { number: 'latest' },
        'tok_ws_opbnb_00000001',
        status.PERMISSION_DENIED,
      ],
      [
        'INVALID_ARGUMENT for a malformed block number',
        'HeaderByNumber',
        { number: 'yesterday' },
        'tok_ws_polygon_000001',
        status.INVALID_ARGUMENT,
      ],
      [
        'INVALID_ARGUMENT for an empty block number (was read as latest)',
        'HeaderByNumber',
        { number: '' },
        'tok_ws_polygon_000001',
        status.INVALID_ARGUMENT,
      ],
      [
        'INVALID_ARGUMENT for GetTdByHash without a hash (was NOT_FOUND for the zero hash)',
        'GetTdByHash',
        {},
        'tok_ws_polygon_000001',
        status.INVALID_ARGUMENT,
      ],
      [
        'INVALID_ARGUMENT for TransactionReceipt without a hash',
        'TransactionReceipt',
        {},
        'tok_ws_polygon_000001',
        status.INVALID_ARGUMENT,
      ],
      [
        'INVALID_ARGUMENT for GetVoteOnHash without a hash',
        'GetVoteOnHash',
        { startBlockNumber: 0, endBlockNumber: 0, milestoneId: 'm' },
        'tok_ws_polygon_000001',
        status.INVALID_ARGUMENT,
      ],
      [
        'NOT_FOUND for a block beyond the head',
        'HeaderByNumber',
        { number: '99999999' },
        'tok_ws_polygon_000001',
        status.NOT_FOUND,
      ],
      [
        'UNIMPLEMENTED for a Bor-only call on a non-Bor node',
        'GetRootHash',
        { startBlockNumber: 0, endBlockNumber: 0 },
        'tok_ws_polygon_000001',
        status.UNIMPLEMENTED,
      ],
    ])('%s', async (_name, method, request, token, code) => {
      const { error } = await callBor(method, request, token);
      expect(error?.code).toBe(code);
    });

    /** What a refusal carries: status, message, and the trailers toGrpcStatus adds. */
    const refusal = (error: ServiceError | null) => ({
      code: error?.code,
      details: error?.details,
      errorCode: error?.metadata.get('error-code'),
      retryable: error?.metadata.get('error-retryable'),
    });

    it('a balance that cannot be spent is RESOURCE_EXHAUSTED, its cause in the error-code trailer: cu_exhausted, or plan_required for an account without a plan (ADR 0210 amendment)', async () => {
      const spent = await callBor('HeaderByNumber', { number: 'latest' }, TOKENS.polygonSpent);
      expect(refusal(spent.error)).toEqual({
        code: status.RESOURCE_EXHAUSTED,
        details: expect.stringContaining('compute units (CU) balance of this account is exhausted'),
        errorCode: ['cu_exhausted'],
        retryable: ['false'],
      });
      // The same status and trailers, the missing plan named instead of "exhausted" (as the HTTP
      // edge names it in data.code, gateway-http.int-spec.ts), on each way a BorApi method
      // reaches the relay: one call, a batch of blocks, GetAuthor's own.
      for (const [method, request] of [
        ['HeaderByNumber', { number: 'latest' }],
        ['GetBlockInfoInBatch', { startBlockNumber: 0, endBlockNumber: 0 }],
        ['GetAuthor', { number: '0x0' }],
      ] as const) {
        const noPlan = await callBor(method, request, TOKENS.polygonNoPlan);
        expect({ method, ...refusal(noPlan.error) }).toEqual({
          method,
          code: status.RESOURCE_EXHAUSTED,
          details: expect.stringContaining('this account has no plan'),
          errorCode: ['plan_required'],
          retryable: ['false'],
        });
        expect(noPlan.error?.details).not.toContain('exhausted');
      }
      // An account with a plan and CU on the same server is still answered.
      const paying = await callBor('HeaderByNumber', { number: 'latest' }, TOKENS.polygon);
      expect(paying.error).toBeNull();
    });
  });
});

import WebSocket from 'ws';
import {
  startAnvil,
  startFakeSuiUpstream,
  type AnvilInstance,
  type FakeSuiUpstream,
} from '@meridian/testing';
import { provisionNamespace, rpc, startGateway, type RunningGateway } from './gateway-harness';

/**
 * QA: a request the gateway refused itself, before relaying it, was answered under id null
 * (`{"id":null,"error":{"code":-32041,…}}` for a bad token, the same for a network not offered,
 * a balance or a rate refusal of a batch), so a client matching answers by id lost the link.
 * JSON-RPC 2.0 allows null only when the id could not be read. And the deprecation of network
 * S's two methods (spec "Versioning" 4) reached no caller: now a `Deprecation` header (RFC 9745).
 */
const TOKENS = {
  eth: 'tok_ids_eth_00000001',
  broke: 'tok_ids_broke_000001',
  slow: 'tok_ids_slow_0000001',
  sui: 'tok_ids_sui_00000001',
};
const DEPRECATION = '@1795219200';

type Answer = { id?: unknown; result?: unknown; error?: { code: number; data?: unknown } };
const call = (id: unknown, method = 'eth_blockNumber') => ({
  jsonrpc: '2.0',
  id,
  method,
  params: [],
});
/** A batch of two calls with ids (a number and a string) and a notification. */
const batch = (method = 'eth_blockNumber') => [
  call(7, method),
  call('seven', method),
  { jsonrpc: '2.0', method, params: [] },
];
const batchRefused = (code: number) => [
  { jsonrpc: '2.0', id: 7, error: expect.objectContaining({ code }) },
  { jsonrpc: '2.0', id: 'seven', error: expect.objectContaining({ code }) },
];

describe('rpc-gateway: refusals made before relaying echo the request ids', () => {
  let eth: AnvilInstance;
  let sui: FakeSuiUpstream;
  let ns: Awaited<ReturnType<typeof provisionNamespace>>;
  let eu: RunningGateway;
  let shared: RunningGateway;
  /** The shared endpoint with billing-ledger unreachable: every token check is unavailable. */
  let sharedDown: RunningGateway;

  beforeAll(async () => {
    [eth, sui, ns] = await Promise.all([
      startAnvil({ chainId: 1 }),
      startFakeSuiUpstream(),
      provisionNamespace(),
    ]);
    const env = (region: string) => ({
      REGION: region,
      NATS_URL: ns.url,
      NATS_PREFIX: ns.prefix,
      GRPC_ENABLED: 'false',
      UPSTREAMS: JSON.stringify({ 'eth-mainnet': [eth.url] }),
      SUI_UPSTREAM_URLS: sui.url,
      STATIC_ACCESS_TOKENS: JSON.stringify({
        [TOKENS.eth]: { accountId: 'acct-ids', network: 'eth-mainnet', planId: 'pro' },
        [TOKENS.broke]: {
          accountId: 'acct-ids-broke',
          network: 'eth-mainnet',
          status: 'exhausted',
        },
        [TOKENS.slow]: { accountId: 'acct-ids-slow', network: 'eth-mainnet', nodeRps: 1 },
        [TOKENS.sui]: { accountId: 'acct-ids-sui', network: 'sui-mainnet', planId: 'pro' },
      }),
    });
    const down = Object.assign(env('shared'), { BILLING_GRPC_URL: '127.0.0.1:1' });
    delete (down as { STATIC_ACCESS_TOKENS?: string }).STATIC_ACCESS_TOKENS;
    [eu, shared, sharedDown] = await Promise.all([
      startGateway(env('eu')),
      startGateway(env('shared')),
      startGateway(down),
    ]);
  });

  afterAll(async () => {
    await Promise.all([eu?.stop(), shared?.stop(), sharedDown?.stop()]);
    await Promise.all([eth?.stop(), sui?.close(), ns?.cleanup()]);
  });

  describe('HTTP', () => {
    it('an unknown token → 401 -32041 under the request id; a batch → one error per call with an id', async () => {
      const single = await rpc(`${eu.url}/tok_ids_unknown_0001/`, call(1, 'eth_chainId'));
      expect([single.status, single.json]).toEqual([
        401,
        { jsonrpc: '2.0', id: 1, error: { code: -32041, message: expect.any(String) } },
      ]);
      const many = await rpc(`${eu.url}/tok_ids_unknown_0001`, batch());
      expect([many.status, many.json]).toEqual([401, batchRefused(-32041)]);
      // The id is echoed as written: raw text, no precision lost.
      const big = await rpc(
        `${eu.url}/tok_ids_unknown_0001`,
        '{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"eth_chainId","params":[]}',
      );
      expect(big.text).toContain('"id":123456789012345678901234567890,');
    });

    it('a token of a network not offered here → 404 -32000 under the request id, single and batch', async () => {
      const single = await rpc(`${eu.url}/${TOKENS.sui}`, call(3, 'suix_getLatestSuiSystemState'));
      expect(single.status).toBe(404);
      expect(single.json).toMatchObject({ id: 3, error: { code: -32000 } });
      const many = await rpc(`${shared.url}/${TOKENS.eth}`, batch());
      expect([many.status, many.json]).toEqual([404, batchRefused(-32000)]);
    });

    it('an exhausted balance → 402 -32040 under each id of a batch', async () => {
      const many = await rpc(`${eu.url}/${TOKENS.broke}`, batch());
      expect([many.status, many.json]).toEqual([402, batchRefused(-32040)]);
    });

    it('the plan RPS exceeded → 429 -32005 under each id of a batch, Retry-After kept', async () => {
      const url = `${eu.url}/${TOKENS.slow}`;
      // Both sent together: the bucket of 1 call per second admits one of them, not both.
      const answers = await Promise.all([rpc(url, batch()), rpc(url, batch())]);
      const refused = answers.find((a) => a.status === 429)!;
      expect(refused).toBeDefined();
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(refused.json).toEqual(batchRefused(-32005));
    });

    it('no id to echo stays null: a body that is not JSON, a batch of notifications only', async () => {
      const junk = await rpc(`${eu.url}/tok_ids_unknown_0001`, '{"jsonrpc":');
      expect([junk.status, junk.json]).toEqual([
        401,
        { jsonrpc: '2.0', id: null, error: expect.objectContaining({ code: -32041 }) },
      ]);
      const notifications = await rpc(`${eu.url}/${TOKENS.broke}`, [
        { jsonrpc: '2.0', method: 'eth_blockNumber', params: [] },
      ]);
      expect([notifications.status, notifications.json]).toEqual([
        402,
        { jsonrpc: '2.0', id: null, error: expect.objectContaining({ code: -32040 }) },
      ]);
    });
  });

  describe('WebSocket', () => {
    const open = async (token: string) => {
      const ws = new WebSocket(`ws://127.0.0.1:${eu.port}/${token}`);
      const messages: unknown[] = [];
      const waiting: (() => void)[] = [];
      ws.on('message', (data) => {
        messages.push(JSON.parse(data.toString()));
        waiting.splice(0).forEach((wake) => wake());
      });
      await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
      const next = async (count: number) => {
        while (messages.length < count) await new Promise<void>((wake) => waiting.push(wake));
        return messages.slice(0, count);
      };
      return { ws, next };
    };

    it('an exhausted balance → -32040 under the message id, and under each id of a batch', async () => {
      const session = await open(TOKENS.broke);
      try {
        session.ws.send(JSON.stringify(call(11)));
        session.ws.send(JSON.stringify(batch()));
        const [single, many] = (await session.next(2)) as [Answer, Answer[]];
        expect(single).toMatchObject({ id: 11, error: { code: -32040 } });
        expect(many).toEqual(batchRefused(-32040));
      } finally {
        session.ws.close();
      }
    });

    it('the plan RPS exceeded → -32005 under each id of the refused batch', async () => {
      const session = await open(TOKENS.slow);
      try {
        session.ws.send(JSON.stringify(batch()));
        session.ws.send(JSON.stringify(batch()));
        const answers = (await session.next(2)) as Answer[][];
        const refused = answers.find((a) => a[0]!.error?.code === -32005);
        expect(refused).toEqual(batchRefused(-32005));
      } finally {
        session.ws.close();
      }
    });
  });

  describe('Deprecation of network S methods (RFC 9745)', () => {
    const url = () => `${shared.url}/${TOKENS.sui}`;

    it('a call of either deprecated method, alone or in a batch, carries Deprecation; other calls do not', async () => {
      const state = await rpc(url(), call(1, 'suix_getLatestSuiSystemState'));
      expect(state.status).toBe(200);
      expect((state.json as Answer).result).toBeDefined();
      expect(state.headers.get('deprecation')).toBe(DEPRECATION);
      expect(state.headers.get('access-control-expose-headers')).toContain('deprecation');

      const past = await rpc(url(), [
        call(2, 'sui_getObject'),
        {
          jsonrpc: '2.0',
          id: 3,
          method: 'sui_tryMultiGetPastObjects',
          params: [[{ objectId: '0x5', version: '1' }]],
        },
      ]);
      expect(past.status).toBe(200);
      expect(past.headers.get('deprecation')).toBe(DEPRECATION);

      // A method S does not serve is not deprecated: -32601, no header.
      const other = await rpc(url(), call(4, 'sui_getObject'));
      expect((other.json as Answer).error?.code).toBe(-32601);
      expect(other.headers.get('deprecation')).toBeNull();
      const evm = await rpc(`${eu.url}/${TOKENS.eth}`, call(5));
      expect((evm.json as Answer).result).toBeDefined();
      expect(evm.headers.get('deprecation')).toBeNull();
    });

    // The header follows the method asked, not the outcome: a 503 (no token check) on S too.
    it('a 503 while the credential check is unavailable follows the method: Deprecation or not', async () => {
      const state = await rpc(`${sharedDown.url}/${TOKENS.sui}`, [
        call(1, 'sui_getObject'),
        call(2, 'suix_getLatestSuiSystemState'),
      ]);
      expect(state.status).toBe(503);
      expect(state.json).toEqual([
        { jsonrpc: '2.0', id: 1, error: expect.objectContaining({ code: -32000 }) },
        { jsonrpc: '2.0', id: 2, error: expect.objectContaining({ code: -32000 }) },
      ]);
      expect(state.headers.get('deprecation')).toBe(DEPRECATION);
      const other = await rpc(`${sharedDown.url}/${TOKENS.sui}`, call(3, 'sui_getObject'));
      expect(other.status).toBe(503);
      expect(other.headers.get('deprecation')).toBeNull();
    });

    // QA PP: a batch of 101 refused whole for its size (-32005) went without the header.
    it('a batch over MAX_BATCH naming a deprecated method: -32005, still Deprecation', async () => {
      const over = await rpc(
        url(),
        Array.from({ length: 101 }, (_, i) => call(i, 'suix_getLatestSuiSystemState')),
      );
      expect(over.status).toBe(200);
      expect(over.json).toMatchObject({ id: null, error: { code: -32005 } });
      expect(over.headers.get('deprecation')).toBe(DEPRECATION);
      const other = await rpc(
        url(),
        Array.from({ length: 101 }, (_, i) => call(i, 'sui_getObject')),
      );
      expect(other.json).toMatchObject({ error: { code: -32005 } });
      expect(other.headers.get('deprecation')).toBeNull();
    });

    // QA: a deprecated method refused for its params' shape (-32602) went without the header.
    it.each([
      ['by-name params', { past_objects: [] }],
      ['params null', null],
      ['params omitted', undefined],
    ])(
      'refused for its params (%s): still Deprecation, alone and in a batch',
      async (_, params) => {
        const past = { jsonrpc: '2.0', id: 5, method: 'sui_tryMultiGetPastObjects', params };
        const alone = await rpc(url(), past);
        expect(alone.status).toBe(200);
        expect((alone.json as Answer).error?.code).toBe(-32602);
        expect(alone.headers.get('deprecation')).toBe(DEPRECATION);

        const inBatch = await rpc(url(), [call(6, 'sui_getObject'), past]);
        expect((inBatch.json as Answer[]).map((a) => a.error?.code)).toEqual([-32601, -32602]);
        expect(inBatch.headers.get('deprecation')).toBe(DEPRECATION);
      },
    );

    // QA: the header followed a -32600 for `"params":"x"` but not one for `"jsonrpc":"1.0"` or
    // `"id":{}`. Whatever else is wrong, a request naming a deprecated method carries it.
    it.each([
      ['"params":"x"', { jsonrpc: '2.0', id: 7, params: 'x' }, 7],
      ['"jsonrpc":"1.0"', { jsonrpc: '1.0', id: 7, params: [] }, 7],
      ['"id":{}', { jsonrpc: '2.0', id: {}, params: [] }, null],
      ['no jsonrpc member', { id: 7, params: [] }, 7],
    ])('-32600 for %s: still Deprecation, alone and in a batch', async (_, shape, id) => {
      const bad = { ...shape, method: 'suix_getLatestSuiSystemState' };
      const alone = await rpc(url(), bad);
      expect(alone.status).toBe(200);
      expect(alone.json).toMatchObject({ id, error: { code: -32600 } });
      expect(alone.headers.get('deprecation')).toBe(DEPRECATION);

      const inBatch = await rpc(url(), [call(8, 'sui_getObject'), bad]);
      expect((inBatch.json as Answer[]).map((a) => a.error?.code)).toEqual([-32601, -32600]);
      expect(inBatch.headers.get('deprecation')).toBe(DEPRECATION);

      // The same shapes naming a method that is not deprecated: no header.
      const plain = await rpc(url(), { ...shape, method: 'sui_getObject' });
      expect((plain.json as Answer).error?.code).toBe(-32600);
      expect(plain.headers.get('deprecation')).toBeNull();
    });
  });
});

import { DomainError } from '@meridian/errors';
import { NETWORKS, type Endpoint } from '@meridian/networks';
import { UsageMeter } from '@meridian/platform-messaging';
import { FakeClock } from '@meridian/time';
import { Registry } from 'prom-client';
import { LruCache } from '../cache/lru-cache';
import type { AccountSnapshot, ResolvedToken } from '../credentials/credential-cache';
import type { CredentialService } from '../credentials/credential.service';
import { SpendEstimate } from '../credentials/spend-estimate';
import { RateLimiter } from '../limits/token-bucket';
import { GatewayMetrics } from '../observability/gateway-metrics';
import type { CallAnswer, OutCall, UpstreamRouter } from '../upstreams/upstream-router';
import { AnswerBudget, AnswersInFlight } from '../upstreams/answer-budget';
import { CALL_ABANDONED } from './gateway-errors';
import { RelayService } from './relay.service';

const P = NETWORKS['polygon-mainnet'];
const token: ResolvedToken = {
  tokenId: 't1',
  accountId: 'acct-free',
  network: 'polygon-mainnet',
};
const FREE: AccountSnapshot = { accountId: 'acct-free', status: 'ok', nodeRps: 20, version: 1 };
/** Tokens the credential lookup finds: one of P (offered at `eu`), one of S (not offered there). */
const tokens: Record<string, { found: true; token: ResolvedToken }> = {
  'tok-p': { found: true, token },
  'tok-sui': {
    found: true,
    token: { tokenId: 't2', accountId: 'acct-free', network: 'sui-mainnet' },
  },
};

const blocks = (n: number): OutCall[] =>
  Array.from({ length: n }, (_, i) => ({
    method: 'eth_getBlockByNumber',
    params: [`0x${i.toString(16)}`, false],
    paramsRaw: `["0x${i.toString(16)}",false]`,
  }));

/**
 * The relay with the real plan-RPS bucket (on a fake clock), the real spend estimate and meter;
 * the node is a function of the calls relayed (`node`), and what it was sent is kept (`sent`).
 */
function relayOf(
  spendableCu: number,
  node: (call: OutCall) => CallAnswer,
  maxBatch = 1000,
  endpoint: Endpoint = 'eu',
  unavailable = false,
) {
  const clock = new FakeClock();
  const estimate = new SpendEstimate();
  estimate.reset(1, spendableCu);
  const meter = new UsageMeter();
  const registry = new Registry();
  const sent: OutCall[] = [];
  const credentials = {
    estimate: () => estimate,
    account: () => FREE,
    ranOut: () => undefined,
    lookup: (t: string) => (unavailable ? { unavailable: true } : (tokens[t] ?? { found: false })),
  } as unknown as CredentialService;
  const router = {
    pool: () => undefined,
    send: (_network: string, _account: string, calls: readonly OutCall[]) => {
      sent.push(...calls);
      return Promise.resolve(calls.map(node));
    },
  } as unknown as UpstreamRouter;
  const relay = new RelayService(
    { endpoint, maxBatch, maxLogsBlockRange: 10_000, maxResponseBytes: 1024 * 1024 },
    credentials,
    router,
    new LruCache<string>(0),
    new RateLimiter(() => clock.now().getTime()),
    meter,
    new GatewayMetrics(registry),
  );
  const billedCu = () => meter.drain().reduce((sum, usage) => sum + usage.totalCu, 0);
  /** `rpc_gateway_calls_total` as "method status" → count. */
  const callsCounted = async () => {
    const metric = await registry.getSingleMetric('rpc_gateway_calls_total')!.get();
    return Object.fromEntries(
      metric.values.map((v) => [`${String(v.labels.method)} ${String(v.labels.status)}`, v.value]),
    );
  };
  return { relay, estimate, sent, billedCu, callsCounted };
}

const block: CallAnswer = { kind: 'result', resultText: '{"number":"0x1","miner":"0x00"}' };

async function refusalOf(promise: Promise<unknown>): Promise<DomainError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('not refused');
}

describe('RelayService.relayInternal (gRPC BorApi): balance before plan RPS', () => {
  it('a method whose calls need more CU than are left is refused before it takes plan-RPS tokens, saying so', async () => {
    // QA: Free (20 RPS), 1,040 CU left, GetBlockInfoInBatch of 100 blocks (2,000 CU): refused
    // "exhausted", and its 100 tokens kept, so the next call was "rate limit exceeded" for 5 s.
    const { relay, estimate, sent, billedCu } = relayOf(1_040, () => block);
    const refused = await refusalOf(relay.relayInternal(token, P, blocks(100)));
    expect(refused.code).toBe('cu_insufficient');
    expect(refused.kind).toBe('payment_required');
    expect(refused.message).toBe(
      'payment required: this request needs 2000 compute units (CU) and the account has 1040 CU left; send fewer calls, top up or wait for the allowance reset',
    );
    expect(refused.message).not.toContain('exhausted');
    expect(sent).toHaveLength(0);
    expect(estimate.remainingCu).toBe(1_040);
    // At the same instant, a full bucket's worth (20 calls, 400 CU) is answered: no token was kept.
    const answers = await relay.relayInternal(token, P, blocks(20));
    expect(answers).toHaveLength(20);
    expect(billedCu()).toBe(400);
  });

  it('a method the estimate covers (the last call may overdraw, as over HTTP) is answered', async () => {
    const { relay, billedCu } = relayOf(1_990, () => block);
    await expect(relay.relayInternal(token, P, blocks(100))).resolves.toHaveLength(100);
    expect(billedCu()).toBe(2_000);
  });

  it('a spent estimate is still refused as exhausted, before any token', async () => {
    const { relay, sent } = relayOf(0, () => block);
    const refused = await refusalOf(relay.relayInternal(token, P, blocks(1)));
    expect(refused.code).toBe('cu_exhausted');
    expect(sent).toHaveLength(0);
  });

  it('a method refused for the rate keeps its CU in the estimate', async () => {
    const { relay, estimate } = relayOf(100_000, () => block);
    await relay.relayInternal(token, P, blocks(100));
    const refused = await refusalOf(relay.relayInternal(token, P, blocks(1)));
    expect(refused.kind).toBe('rate_limited');
    expect(estimate.remainingCu).toBe(100_000 - 2_000);
  });
});

describe('what is billed: a node that does not implement a method (-32601) is not', () => {
  const notFound: CallAnswer = {
    kind: 'node_error',
    error: { code: -32601, message: 'the method bor_getRootHash does not exist/is not available' },
  };
  const reverted: CallAnswer = {
    kind: 'node_error',
    error: { code: 3, message: 'execution reverted' },
  };

  it('gRPC: a Bor-only call a non-Bor node answers -32601 (UNIMPLEMENTED) is not billed; a node error of another code is', async () => {
    // QA: BorBlockReceipt, GetRootHash, GetVoteOnHash, GetStartBlockHeimdallSpanID billed 20 CU.
    const { relay, estimate, billedCu } = relayOf(1_000, () => notFound);
    const call: OutCall = { method: 'bor_getRootHash', params: [1, 2], paramsRaw: '[1,2]' };
    const [answer] = await relay.relayInternal(token, P, [call]);
    expect(answer).toEqual(notFound);
    expect(billedCu()).toBe(0);
    expect(estimate.remainingCu).toBe(1_000);

    const billed = relayOf(1_000, () => reverted);
    await billed.relay.relayInternal(token, P, [call]);
    expect(billed.billedCu()).toBe(20);
  });

  it('JSON-RPC: a method of the table the node answers -32601 is answered so, not billed, its CU back', async () => {
    expect(P.methods.has('eth_getProof')).toBe(true);
    const { relay, estimate, billedCu } = relayOf(1_000, (call) =>
      call.method === 'eth_getProof' ? notFound : reverted,
    );
    const body = JSON.stringify([
      { jsonrpc: '2.0', id: 1, method: 'eth_getProof', params: ['0x00', [], 'latest'] },
      { jsonrpc: '2.0', id: 2, method: 'eth_call', params: [{}, 'latest'] },
    ]);
    const answer = await relay.handle(token, P, body, 'http');
    expect(answer.refused).toBeUndefined();
    const calls = JSON.parse(answer.body) as { id: number; error: { code: number } }[];
    expect(calls.map((c) => [c.id, c.error.code])).toEqual([
      [1, -32601],
      [2, 3],
    ]);
    // eth_call's revert is the node's work: billed; eth_getProof's -32601 is not.
    expect(billedCu()).toBe(20);
    expect(estimate.remainingCu).toBe(980);
  });
});

describe('what is billed: a node\'s "not implemented" answer is not, like its -32601', () => {
  it('JSON-RPC: eth_getWork answered -32603 "Not implemented" (anvil) is relayed, not billed, its CU back', async () => {
    // QA: anvil's answer to eth_getWork (in E's table) was billed 20 CU, -32601 was not.
    const E = NETWORKS['eth-mainnet'];
    expect(E.methods.has('eth_getWork')).toBe(true);
    const { relay, estimate, billedCu } = relayOf(1_000, (call) =>
      call.method === 'eth_getWork'
        ? { kind: 'node_error', error: { code: -32603, message: 'Not implemented' } }
        : {
            kind: 'node_error',
            error: { code: -32000, message: 'transaction type not supported' },
          },
    );
    const body = JSON.stringify([
      { jsonrpc: '2.0', id: 1, method: 'eth_getWork', params: [] },
      { jsonrpc: '2.0', id: 2, method: 'eth_sendRawTransaction', params: ['0x01'] },
    ]);
    const answer = await relay.handle(token, E, body, 'http');
    const calls = JSON.parse(answer.body) as { id: number; error: { code: number } }[];
    expect(calls.map((c) => [c.id, c.error.code])).toEqual([
      [1, -32603],
      [2, -32000],
    ]);
    // The node's own refusal of the transaction is billed; its "Not implemented" is not.
    expect(billedCu()).toBe(20);
    expect(estimate.remainingCu).toBe(980);
  });
});

describe('a filter call names one filter id: other params are -32602, unbilled, no node asked', () => {
  it.each([
    ['eth_getFilterChanges', []],
    ['eth_getFilterLogs', [123]],
    ['eth_uninstallFilter', [null]],
    ['eth_getFilterChanges', ['0x01', '0x02']],
    ['eth_uninstallFilter', [{ id: '0x01' }]],
  ])('%s %j', async (method, params) => {
    // QA: [] and [123] answered -32000 "filter not found", a well-formed unknown id's answer.
    const { relay, sent, billedCu } = relayOf(1_000, () => ({ kind: 'result', resultText: '[]' }));
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
    for (const transport of ['http', 'websocket'] as const) {
      const answer = await relay.handle(token, P, body, transport);
      expect(JSON.parse(answer.body)).toEqual({
        jsonrpc: '2.0',
        id: 1,
        error: {
          code: -32602,
          message: `invalid params: ${method} takes one filter id (a string)`,
        },
      });
    }
    expect(sent).toEqual([]);
    expect(billedCu()).toBe(0);
  });
});

/**
 * QA: a key twice in an object of params passed the params check (it reads JSON.parse's last)
 * while the node got the raw text with both, and the call was billed. Now -32602 before any
 * node call, unbilled, on every network: S's object refs and options, E/P/R's tx objects and
 * log filters alike.
 */
describe('a key twice in an object of params: -32602, no node asked, nothing billed', () => {
  const S = NETWORKS['sui-mainnet'];
  const duplicate = (key: string) =>
    `invalid params: duplicate key "${key}" in an object of params; each key may appear once`;

  it.each([
    [
      'S object ref',
      S,
      'sui_tryMultiGetPastObjects',
      '[[{"objectId":"0xzz","objectId":"0x5","version":"1"}]]',
      'objectId',
    ],
    [
      'S options',
      S,
      'sui_tryMultiGetPastObjects',
      `[[{"objectId":"0x${'5'.repeat(64)}","version":"1"}],{"showContent":"yes","showContent":true}]`,
      'showContent',
    ],
    ['P eth_call tx', P, 'eth_call', '[{"to":"0x1","data":"0x","to":"0x2"},"latest"]', 'to'],
    [
      'P eth_getLogs filter',
      P,
      'eth_getLogs',
      '[{"fromBlock":"0x1","toBlock":"0x2","toBlock":"latest"}]',
      'toBlock',
    ],
  ])('%s', async (_name, network, method, params, key) => {
    const { relay, sent, billedCu } = relayOf(1_000, () => block);
    const body = `[{"jsonrpc":"2.0","id":1,"method":"${method}","params":${params}},{"jsonrpc":"2.0","id":2,"method":"${method}","params":${params.replace(`"${key}"`, '"other"')}}]`;
    const answer = await relay.handle(token, network, body, 'http');
    const [first] = JSON.parse(answer.body) as Array<{ id: number; error?: unknown }>;
    expect(first).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32602, message: duplicate(key) },
    });
    // Only the other call of the batch (its key renamed) may reach the node; it alone is billed.
    expect(sent.map((call) => call.paramsRaw)).not.toContain(params);
    expect(sent.length).toBeLessThanOrEqual(1);
    expect(billedCu()).toBe(sent.length * (network === S ? 100 : 20));
  });
});

describe("a request's node answers leave the worker's budget in flight when it ends (ADR 0215 amendment)", () => {
  const MIB = 1024 * 1024;
  /** A router whose node answers 2 MiB per call, kept (and held) as UpstreamRouter keeps them. */
  function relayHolding(fail: boolean) {
    const inFlight = new AnswersInFlight(64 * MIB);
    const during: number[] = [];
    const router = {
      pool: () => undefined,
      send: async (_n: string, _a: string, calls: readonly OutCall[], budget: AnswerBudget) => {
        await Promise.resolve();
        const answers = calls.map((): CallAnswer => {
          const resultText = `"${'x'.repeat(2 * MIB - 2)}"`;
          budget.keep(resultText.length);
          return { kind: 'result', resultText };
        });
        during.push(inFlight.bytes);
        if (fail) throw new Error('client gone');
        return answers;
      },
    } as unknown as UpstreamRouter;
    const estimate = new SpendEstimate();
    estimate.reset(1, 1_000_000);
    const relay = new RelayService(
      {
        endpoint: 'eu',
        maxBatch: 1000,
        maxLogsBlockRange: 10_000,
        maxResponseBytes: 32 * MIB,
        answersInFlight: inFlight,
      },
      {
        estimate: () => estimate,
        account: () => FREE,
        ranOut: () => undefined,
      } as unknown as CredentialService,
      router,
      new LruCache<string>(0),
      new RateLimiter(() => 0),
      new UsageMeter(),
      new GatewayMetrics(new Registry()),
    );
    return { relay, inFlight, during };
  }
  const request = JSON.stringify([
    { jsonrpc: '2.0', id: 1, method: 'eth_getBlockByNumber', params: ['0x1', false] },
    { jsonrpc: '2.0', id: 2, method: 'eth_getBlockByNumber', params: ['0x2', false] },
  ]);

  it('JSON-RPC: held while relayed, given back once the answer is built', async () => {
    const { relay, inFlight, during } = relayHolding(false);
    const answer = await relay.handle(token, P, request, 'http');
    expect(answer.body.length).toBeGreaterThan(4 * MIB);
    expect(during).toEqual([4 * MIB]);
    expect(inFlight.bytes).toBe(0);
  });

  it('JSON-RPC: given back when the relay fails', async () => {
    const { relay, inFlight, during } = relayHolding(true);
    await expect(relay.handle(token, P, request, 'http')).rejects.toThrow('client gone');
    expect(during).toEqual([4 * MIB]);
    expect(inFlight.bytes).toBe(0);
  });

  it('gRPC: given back once the method is answered, or when it fails', async () => {
    const answered = relayHolding(false);
    await answered.relay.relayInternal(token, P, blocks(2));
    expect(answered.during).toEqual([4 * MIB]);
    expect(answered.inFlight.bytes).toBe(0);
    const failed = relayHolding(true);
    await expect(failed.relay.relayInternal(token, P, blocks(2))).rejects.toThrow('client gone');
    expect(failed.inFlight.bytes).toBe(0);
  });
});

/**
 * QA NN: the request log's `calls` meant neither sent nor billed (a 429-refused batch of 100
 * logged 0, a malformed body or an empty batch 1) and a refused token logged no network. Now
 * `calls` is the calls the request holds as parsed, `billedCalls`/`cu` what was metered.
 */
describe("a request's calls as parsed, its billed calls and CU (the request log's fields)", () => {
  const batch = (n: number) =>
    JSON.stringify(
      Array.from({ length: n }, (_, i) => ({
        jsonrpc: '2.0',
        id: i,
        method: 'eth_getBlockByNumber',
        params: [`0x${i.toString(16)}`, false],
      })),
    );

  it('an answered batch: its calls, all billed, their CU', async () => {
    const { relay, billedCu } = relayOf(100_000, () => block);
    const answer = await relay.handle(token, P, batch(3), 'http');
    expect(answer).toMatchObject({ calls: 3, billedCalls: 3, network: 'polygon-mainnet' });
    expect(answer.cu).toBe(billedCu());
    expect(answer.cu).toBe(60);
  });

  it('a batch of 100 refused for the rate: 100 calls, none billed', async () => {
    const { relay } = relayOf(100_000, () => block);
    await relay.handle(token, P, batch(100), 'http');
    const refused = await relay.handle(token, P, batch(100), 'http');
    expect(refused.refused?.kind).toBe('rate_limited');
    expect(refused).toMatchObject({ calls: 100, billedCalls: 0, cu: 0, account: 'acct-free' });
  });

  it.each([
    ['a body that did not parse', '{'],
    ['an empty batch', '[]'],
  ])('%s: 0 calls, none billed', async (_what, body) => {
    const { relay, billedCu } = relayOf(100_000, () => block);
    const answer = await relay.handle(token, P, body, 'http');
    expect(answer).toMatchObject({ calls: 0, billedCalls: 0, cu: 0 });
    expect(billedCu()).toBe(0);
  });

  it('a call refused for its params counts as a call, not billed', async () => {
    const { relay } = relayOf(100_000, () => block);
    const body = '{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":"x"}';
    const answer = await relay.handle(token, P, body, 'http');
    expect(answer).toMatchObject({ calls: 1, billedCalls: 0, cu: 0 });
  });

  it('a refused token: its calls; the network and account when the token was found', async () => {
    const { relay } = relayOf(100_000, () => block);
    const unknown = await relay.handleHttp('tok-none', batch(2));
    expect(unknown.refused?.kind).toBe('unauthenticated');
    expect(unknown).toMatchObject({ calls: 2, billedCalls: 0, cu: 0 });
    expect(unknown.network).toBeUndefined();
    const elsewhere = await relay.handleHttp('tok-sui', batch(1));
    expect(elsewhere.refused?.kind).toBe('not_found');
    expect(elsewhere).toMatchObject({ network: 'sui-mainnet', account: 'acct-free', calls: 1 });
  });

  it("a request refused before its token is found names the shared endpoint's one network (S)", async () => {
    const shared = relayOf(100_000, () => block, 1000, 'shared');
    const unknown = await shared.relay.handleHttp('tok-none', batch(2));
    expect(unknown.refused?.kind).toBe('unauthenticated');
    expect(unknown).toMatchObject({ network: 'sui-mainnet', calls: 2 });
    expect(unknown.account).toBeUndefined();
    const down = relayOf(100_000, () => block, 1000, 'shared', true);
    const unavailable = await down.relay.handleHttp('tok-sui', batch(1));
    expect(unavailable.refused?.kind).toBe('unavailable');
    expect(unavailable).toMatchObject({ network: 'sui-mainnet', calls: 1 });
    // A regional endpoint serves several networks: only a token found names one.
    const regional = relayOf(100_000, () => block, 1000, 'eu', true);
    expect((await regional.relay.handleHttp('tok-p', batch(1))).network).toBeUndefined();
  });

  it('a body refused unread (413, 415): no calls; the network as a refused token logs it', async () => {
    const { relay } = relayOf(100_000, () => block);
    expect(await relay.unreadRequest('tok-p')).toEqual({
      network: 'polygon-mainnet',
      account: 'acct-free',
      calls: 0,
      billedCalls: 0,
      cu: 0,
    });
    expect(await relay.unreadRequest('tok-sui')).toMatchObject({ network: 'sui-mainnet' });
    expect((await relay.unreadRequest('tok-none')).network).toBeUndefined();
    const shared = relayOf(100_000, () => block, 1000, 'shared');
    expect(await shared.relay.unreadRequest('tok-none')).toMatchObject({
      network: 'sui-mainnet',
      calls: 0,
    });
  });

  it('gRPC: a tally adds up the calls asked (a refused method too), billed and CU', async () => {
    const { relay, billedCu } = relayOf(100_000, () => block);
    const tally = { calls: 0, billedCalls: 0, cu: 0 };
    await relay.relayInternal(token, P, blocks(100), undefined, tally);
    await refusalOf(relay.relayInternal(token, P, blocks(5), undefined, tally));
    expect(tally).toEqual({ calls: 105, billedCalls: 100, cu: billedCu() });
    expect(tally.cu).toBe(2_000);
  });
});

/**
 * QA PP: the deprecated S methods, refused for their params or envelope, were counted under
 * method="other", and a batch over the cap naming them went without the Deprecation header.
 */
describe('network S: a refused call of a deprecated method still names it', () => {
  const S = NETWORKS['sui-mainnet'];
  const sui = tokens['tok-sui']!.token;

  it('rpc_gateway_calls_total keeps a known method name for a refused call; unknown is other', async () => {
    const { relay, sent, callsCounted } = relayOf(100_000, () => block);
    const bodies = [
      '{"jsonrpc":"2.0","id":1,"method":"sui_tryMultiGetPastObjects","params":{"a":1}}',
      '{"jsonrpc":"1.0","id":2,"method":"suix_getLatestSuiSystemState","params":[]}',
      '{"jsonrpc":"2.0","id":3,"method":"suix_getLatestSuiSystemState","params":[1]}',
      '{"jsonrpc":"1.0","id":4,"method":"sui_madeUp","params":[]}',
    ];
    for (const body of bodies) await relay.handle(sui, S, body, 'http');
    expect(sent).toEqual([]);
    expect(await callsCounted()).toEqual({
      'sui_tryMultiGetPastObjects -32602': 1,
      'suix_getLatestSuiSystemState -32600': 1,
      'suix_getLatestSuiSystemState -32602': 1,
      'other -32600': 1,
    });
  });

  it('a 503 (credential check unavailable) at the shared endpoint follows the method asked', async () => {
    const down = relayOf(100_000, () => block, 1000, 'shared', true);
    const call = (method: string) => `{"jsonrpc":"2.0","id":1,"method":"${method}","params":[]}`;
    const state = await down.relay.handleHttp('tok-sui', call('suix_getLatestSuiSystemState'));
    expect(state.refused?.kind).toBe('unavailable');
    expect(state.deprecated).toBe(true);
    const inBatch = `[${call('sui_getObject')},${call('sui_tryMultiGetPastObjects')}]`;
    expect((await down.relay.handleHttp('tok-sui', inBatch)).deprecated).toBe(true);
    expect((await down.relay.handleHttp('tok-sui', call('sui_getObject'))).deprecated).toBe(false);
    // 401 and 404 are served nothing here: no header (README, Network S).
    const shared = relayOf(100_000, () => block, 1000, 'shared');
    const unknown = await shared.relay.handleHttp('tok-none', call('suix_getLatestSuiSystemState'));
    expect(unknown.refused?.kind).toBe('unauthenticated');
    expect(unknown.deprecated).toBe(false);
    const eu = relayOf(100_000, () => block);
    const elsewhere = await eu.relay.handleHttp('tok-sui', call('suix_getLatestSuiSystemState'));
    expect(elsewhere.refused?.kind).toBe('not_found');
    expect(elsewhere.deprecated).toBe(false);
  });

  it('a batch over the cap naming a deprecated method is deprecated; one naming none is not', async () => {
    const { relay } = relayOf(100_000, () => block, 100);
    const batch = (method: string, n: number) =>
      JSON.stringify(
        Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: i, method, params: [] })),
      );
    const over = await relay.handle(sui, S, batch('suix_getLatestSuiSystemState', 101), 'http');
    expect(JSON.parse(over.body)).toMatchObject({
      id: null,
      error: { code: -32005, message: expect.stringContaining('batch of 101 requests') },
    });
    expect(over.deprecated).toBe(true);
    const mixed = JSON.stringify([
      ...Array.from({ length: 100 }, (_, i) => ({
        jsonrpc: '2.0',
        id: i,
        method: 'sui_getObject',
      })),
      { jsonrpc: '1.0', id: 100, method: 'sui_tryMultiGetPastObjects' },
    ]);
    expect((await relay.handle(sui, S, mixed, 'http')).deprecated).toBe(true);
    const other = await relay.handle(sui, S, batch('sui_getObject', 101), 'http');
    expect(other.deprecated).toBe(false);
    const within = await relay.handle(sui, S, batch('suix_getLatestSuiSystemState', 100), 'http');
    expect(within.deprecated).toBe(true);
  });
});

/**
 * QA (Low): a gRPC call its client cancelled was billed every call of it. A method abandoned
 * (`options.abandoned`) before its calls are admitted sends and bills none and takes no token;
 * abandoned later, the calls a node answered are billed and those not sent give their CU back.
 */
describe('RelayService.relayInternal: a gRPC method its client abandoned', () => {
  it('abandoned before admission: nothing sent, no token, nothing billed, the CU untouched', async () => {
    const { relay, estimate, sent, billedCu } = relayOf(100_000, () => block);
    const tally = { calls: 0, billedCalls: 0, cu: 0 };
    const answers = await relay.relayInternal(
      token,
      P,
      blocks(20),
      { abandoned: AbortSignal.abort() },
      tally,
    );
    expect(answers.every((a) => a.kind === 'gateway_error' && a.error === CALL_ABANDONED)).toBe(
      true,
    );
    expect(sent).toHaveLength(0);
    expect(billedCu()).toBe(0);
    expect(estimate.remainingCu).toBe(100_000);
    expect(tally).toEqual({ calls: 20, billedCalls: 0, cu: 0 });
    // No token taken: a full bucket (Free, 20) is still there at the same instant.
    await expect(relay.relayInternal(token, P, blocks(20))).resolves.toHaveLength(20);
  });

  it('abandoned after its first slice was answered: those billed, the rest unsent and their CU back', async () => {
    const controller = new AbortController();
    const sentSignals: (AbortSignal | undefined)[] = [];
    const { relay, estimate, billedCu } = relayOf(100_000, () => block);
    // The router as it answers an abandoned request (upstream-router.spec.ts): its first slice
    // answered, the calls after it CALL_ABANDONED.
    const router = (relay as unknown as { router: UpstreamRouter }).router;
    router.send = (_n, _a, calls, _b, abandoned) => {
      sentSignals.push(abandoned);
      controller.abort();
      return Promise.resolve(
        calls.map((_, i): CallAnswer =>
          i < 20 ? block : { kind: 'gateway_error', error: CALL_ABANDONED },
        ),
      );
    };
    const tally = { calls: 0, billedCalls: 0, cu: 0 };
    await relay.relayInternal(token, P, blocks(100), { abandoned: controller.signal }, tally);
    expect(sentSignals).toEqual([controller.signal]);
    expect(tally).toEqual({ calls: 100, billedCalls: 20, cu: 400 });
    expect(billedCu()).toBe(400);
    expect(estimate.remainingCu).toBe(100_000 - 400);
  });
});

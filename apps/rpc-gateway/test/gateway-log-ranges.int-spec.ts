import { cuForCall } from '@meridian/compute-units';
import { NETWORKS } from '@meridian/networks';
import { startAnvil, type AnvilInstance } from '@meridian/testing';
import WebSocket from 'ws';
import {
  metricValue,
  provisionNamespace,
  rpc,
  startGateway,
  type RunningGateway,
} from './gateway-harness';

const TOKEN = 'tok_ranges_eth_000001';
/** A small cap, so that a devnet head above it takes a moment to mine. */
const CAP = 100;
const MINED = 150;

type Answer = {
  id?: number;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
};

const ADDRESS = `0x${'12'.repeat(20)}`;
const TOPIC = `0x${'cd'.repeat(32)}`;

/**
 * The block-range cap of eth_getLogs and eth_newFilter with tags resolved against the head the
 * gateway's health checks saw (ADR 0211): against anvil, whose head is mined above the cap.
 */
describe('rpc-gateway log filters: shapes, tags, omitted ends, ranges (anvil)', () => {
  let eth: AnvilInstance;
  let ns: Awaited<ReturnType<typeof provisionNamespace>>;
  let gateway: RunningGateway;

  beforeAll(async () => {
    [eth, ns] = await Promise.all([startAnvil({ chainId: 1 }), provisionNamespace()]);
    await fetch(eth.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"jsonrpc":"2.0","id":1,"method":"anvil_mine","params":["0x${MINED.toString(16)}"]}`,
    });
    gateway = await startGateway({
      REGION: 'eu',
      NATS_URL: ns.url,
      NATS_PREFIX: ns.prefix,
      MAX_LOGS_BLOCK_RANGE: String(CAP),
      UPSTREAMS: JSON.stringify({ 'eth-mainnet': [eth.url] }),
      STATIC_ACCESS_TOKENS: JSON.stringify({
        [TOKEN]: { accountId: 'acct-ranges', network: 'eth-mainnet', planId: 'pro' },
      }),
    });
    // startGateway ran one health check: the head (MINED) is known.
  });

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([eth?.stop(), ns?.cleanup()]);
  });

  const call = async (method: string, params: unknown[]): Promise<Answer> =>
    (await rpc(`${gateway.url}/${TOKEN}/`, { jsonrpc: '2.0', id: 1, method, params }))
      .json as Answer;
  const hex = (n: number) => `0x${n.toString(16)}`;

  it.each([
    ['earliest..a number above the cap', { fromBlock: 'earliest', toBlock: hex(CAP) }],
    ['toBlock omitted (= latest)', { fromBlock: '0x0' }],
    ['toBlock latest', { fromBlock: '0x0', toBlock: 'latest' }],
    ['toBlock finalized', { fromBlock: '0x0', toBlock: 'finalized' }],
    ['earliest..pending', { fromBlock: 'earliest', toBlock: 'pending' }],
    ['one block over the cap, both ends counted', { fromBlock: '0x0', toBlock: hex(CAP) }],
  ])('eth_getLogs %s → -32005, not sent to the node', async (_name, filter) => {
    const answer = await call('eth_getLogs', [filter]);
    expect(answer.error?.code).toBe(-32005);
    expect(answer.error?.message).toContain(`larger than ${CAP} blocks`);
    expect(answer.error?.data).toMatchObject({ limit: CAP });
  });

  it('the range refusal carries data {limit, size} as the batch refusal does', async () => {
    const answer = await call('eth_getLogs', [{ fromBlock: '0x0', toBlock: hex(CAP) }]);
    expect(answer.error).toEqual({
      code: -32005,
      message: `limit exceeded: eth_getLogs block range ${CAP + 1} is larger than ${CAP} blocks (both ends count)`,
      data: { limit: CAP, size: CAP + 1 },
    });
  });

  it.each([
    ['exactly the cap', { fromBlock: '0x0', toBlock: hex(CAP - 1) }],
    ['the last blocks up to the head', { fromBlock: hex(MINED - CAP + 1) }],
    ['latest alone', { fromBlock: 'latest' }],
    ['nothing but a topic', { topics: [`0x${'ab'.repeat(32)}`] }],
  ])('eth_getLogs %s is relayed', async (_name, filter) => {
    const answer = await call('eth_getLogs', [filter]);
    expect(answer.error).toBeUndefined();
    expect(answer.result).toEqual([]);
  });

  it('a blockHash query is not ranged', async () => {
    const block = (await call('eth_getBlockByNumber', ['0x1', false])).result as { hash: string };
    const answer = await call('eth_getLogs', [{ blockHash: block.hash }]);
    expect(answer.error).toBeUndefined();
    expect(answer.result).toEqual([]);
  });

  it('a block bound that is neither a number nor a tag → -32602 before the node', async () => {
    expect((await call('eth_getLogs', [{ fromBlock: 0, toBlock: '0x1' }])).error?.code).toBe(
      -32602,
    );
  });

  it('eth_newFilter over the cap is refused, so eth_getFilterLogs cannot read a wider range', async () => {
    const wide = await call('eth_newFilter', [{ fromBlock: 'earliest' }]);
    expect(wide.error?.code).toBe(-32005);
    expect(wide.error?.message).toContain('eth_newFilter block range');
    expect(
      (await call('eth_newFilter', [{ fromBlock: '0x0', toBlock: hex(CAP) }])).error?.code,
    ).toBe(-32005);
    const narrow = await call('eth_newFilter', [{ fromBlock: hex(MINED - 10) }]);
    expect(typeof narrow.result).toBe('string');
    const logs = await call('eth_getFilterLogs', [narrow.result]);
    expect(logs.error).toBeUndefined();
    expect(logs.result).toEqual([]);
  });

  it('the same cap over WebSocket', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${gateway.port}/${TOKEN}/`);
    await new Promise((resolve) => ws.once('open', resolve));
    const answer = new Promise<Answer>((resolve) =>
      ws.once('message', (data) => resolve(JSON.parse(data.toString()) as Answer)),
    );
    ws.send(
      '{"jsonrpc":"2.0","id":1,"method":"eth_getLogs","params":[{"fromBlock":"earliest","toBlock":"latest"}]}',
    );
    expect((await answer).error?.code).toBe(-32005);
    ws.close();
  });

  it('a filter whose range grows with the chain: eth_getFilterLogs is refused once fromBlock..head passes the cap', async () => {
    const head = Number((await call('eth_blockNumber', [])).result);
    const growing = await call('eth_newFilter', [{ fromBlock: hex(head - 10) }]);
    expect(typeof growing.result).toBe('string');
    expect((await call('eth_getFilterLogs', [growing.result])).result).toEqual([]);
    await fetch(eth.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"jsonrpc":"2.0","id":1,"method":"anvil_mine","params":["0x${CAP.toString(16)}"]}`,
    });
    await gateway.runtime.healthCheckNow();
    const late = await call('eth_getFilterLogs', [growing.result]);
    expect(late.error?.code).toBe(-32005);
    expect(late.error?.message).toContain('eth_getFilterLogs block range 111 is larger than');
    // Its changes are not a range: still answered by the node that holds the filter.
    const changes = await call('eth_getFilterChanges', [growing.result]);
    expect(changes.error).toBeUndefined();
    expect(changes.result).toEqual([]);
  });
  describe('a malformed filter is -32602 from the gateway, unbilled, before any node call', () => {
    const cu = () =>
      metricValue(gateway.url, 'rpc_gateway_usage_cu_total', { network: 'eth-mainnet' });
    const GET_LOGS_CU = cuForCall(NETWORKS['eth-mainnet'], 'eth_getLogs');

    /** Each of these anvil refuses itself (-32602), and the gateway billed that answer. */
    const MALFORMED: [string, Record<string, unknown>, string][] = [
      ['a bad address string', { address: 'nope' }, 'log filter address "nope" is not'],
      ['an address not 20 bytes', { address: '0x12' }, 'log filter address "0x12" is not'],
      ['a bad address in a list', { address: [ADDRESS, 5] }, 'log filter address[1] 5 is not'],
      ['a topic not 32 bytes', { topics: ['0x12'] }, 'log filter topics[0] "0x12" is not'],
      ['a bad topic in a list', { topics: [[TOPIC, '0xzz']] }, 'log filter topics[0][1]'],
      ['topics not a list', { topics: TOPIC }, 'log filter topics is a list'],
      [
        'five topic positions',
        { topics: [TOPIC, null, null, null, null] },
        'log filter topics has 5 positions',
      ],
      ['fromBlock garbage', { fromBlock: 'garbage' }, 'log filter fromBlock "garbage" is not'],
      ['a bad blockHash', { blockHash: '0x12' }, 'log filter blockHash "0x12" is not'],
      [
        'blockHash with fromBlock',
        { blockHash: `0x${'ab'.repeat(32)}`, fromBlock: '0x0' },
        'a log filter takes blockHash or fromBlock/toBlock, not both',
      ],
    ];

    it.each(MALFORMED)('eth_getLogs and eth_newFilter, %s', async (_name, filter, message) => {
      const before = await cu();
      const answers = [await call('eth_getLogs', [filter]), await call('eth_newFilter', [filter])];
      // Before: anvil's own -32602 ("Invalid variadic value…"), billed as a node answer.
      expect((await cu()) - before).toBe(0);
      for (const answer of answers) {
        expect(answer.error?.code).toBe(-32602);
        expect(answer.error?.message).toContain(`invalid params: ${message}`);
      }
    });

    it('in a batch each malformed call fails alone; the valid one is answered and billed', async () => {
      const before = await cu();
      const batch = (
        await rpc(`${gateway.url}/${TOKEN}/`, [
          { jsonrpc: '2.0', id: 1, method: 'eth_getLogs', params: [{ address: '0x12' }] },
          { jsonrpc: '2.0', id: 2, method: 'eth_getLogs', params: [{ address: ADDRESS }] },
          { jsonrpc: '2.0', id: 3, method: 'eth_newFilter', params: [{ topics: [[[TOPIC]]] }] },
        ])
      ).json as Answer[];
      const byId = new Map(batch.map((a) => [a.id, a]));
      expect(byId.get(1)?.error?.code).toBe(-32602);
      expect(byId.get(2)?.result).toEqual([]);
      expect(byId.get(3)?.error?.message).toContain('log filter topics[0][0] a list is not');
      expect((await cu()) - before).toBe(GET_LOGS_CU);
    });

    it('over WebSocket: eth_getLogs, eth_newFilter and eth_subscribe logs, one rule', async () => {
      const ws = new WebSocket(`ws://127.0.0.1:${gateway.port}/${TOKEN}/`);
      await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
      const answers = new Map<number, Answer>();
      const waiting = new Map<number, () => void>();
      ws.on('message', (data) => {
        const message = JSON.parse(data.toString()) as Answer;
        if (typeof message.id !== 'number') return;
        answers.set(message.id, message);
        waiting.get(message.id)?.();
      });
      const ask = (id: number, method: string, params: unknown[]) => {
        ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
        return answers.has(id)
          ? Promise.resolve(answers.get(id)!)
          : new Promise<Answer>((resolve) => waiting.set(id, () => resolve(answers.get(id)!)));
      };
      const before = await cu();
      const bad = { address: ADDRESS, fromBlock: 'garbage' };
      for (const [id, method, params] of [
        [1, 'eth_getLogs', [bad]],
        [2, 'eth_newFilter', [bad]],
        [3, 'eth_subscribe', ['logs', bad]],
      ] as const) {
        const answer = await ask(id, method, [...params]);
        expect(answer.error?.code).toBe(-32602);
        expect(answer.error?.message).toBe(
          'invalid params: log filter fromBlock "garbage" is not a block number in hex (0x…) or one of earliest, latest, safe, finalized, pending',
        );
      }
      expect((await cu()) - before).toBe(0);
      const good = { address: [ADDRESS], topics: [null, [TOPIC, null]] };
      expect((await ask(4, 'eth_getLogs', [good])).result).toEqual([]);
      expect(typeof (await ask(5, 'eth_subscribe', ['logs', good])).result).toBe('string');
      ws.close();
    });
  });

  describe('every form a node takes is still relayed', () => {
    // Ranges stay within the cap whatever the head is (the test above mined past it).
    const FORMS: [string, Record<string, unknown>][] = [
      ['one address', { address: ADDRESS, fromBlock: 'latest' }],
      ['a list of addresses', { address: [ADDRESS, `0x${'AB'.repeat(20)}`], fromBlock: 'latest' }],
      ['null address and topics', { address: null, topics: null, fromBlock: 'latest' }],
      ['null, nested and empty topic positions', { topics: [null, [TOPIC, null], TOPIC, []] }],
      ['four null topic positions', { topics: [null, null, null, null] }],
      ['earliest..a number', { fromBlock: 'earliest', toBlock: '0x10' }],
      ['safe..finalized', { fromBlock: 'safe', toBlock: 'finalized' }],
      ['pending..latest', { fromBlock: 'pending', toBlock: 'latest' }],
      ['hex quantities, 0X and leading zeros', { fromBlock: '0X01', toBlock: '0x0A' }],
      ['tags in capitals (anvil takes them)', { fromBlock: 'LATEST' }],
      ['an address without 0x (anvil takes it)', { address: '12'.repeat(20) }],
    ];

    it.each(FORMS)('%s: eth_getLogs and eth_newFilter', async (_name, filter) => {
      const logs = await call('eth_getLogs', [filter]);
      expect(logs.error).toBeUndefined();
      expect(logs.result).toEqual([]);
      const made = await call('eth_newFilter', [filter]);
      expect(made.error).toBeUndefined();
      expect(typeof made.result).toBe('string');
    });

    it('the blockHash form, with null bounds', async () => {
      const block = (await call('eth_getBlockByNumber', ['0x2', false])).result as { hash: string };
      const answer = await call('eth_getLogs', [
        { blockHash: block.hash, fromBlock: null, address: [ADDRESS], topics: [TOPIC] },
      ]);
      expect(answer.error).toBeUndefined();
      expect(answer.result).toEqual([]);
    });
  });
});

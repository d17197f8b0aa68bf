import { startAnvil, type AnvilInstance } from '@meridian/testing';
import WebSocket from 'ws';
import { provisionNamespace, rpc, startGateway, type RunningGateway } from './gateway-harness';

const TOKEN = 'tok_ranges_eth_000001';
/** A small cap, so that a devnet head above it takes a moment to mine. */
const CAP = 100;
const MINED = 150;

type Answer = { result?: unknown; error?: { code: number; message: string } };

/**
 * The block-range cap of eth_getLogs and eth_newFilter with tags resolved against the head the
 * gateway's health checks saw (ADR 0211): against anvil, whose head is mined above the cap.
 */
describe('rpc-gateway log ranges: tags, omitted ends, filters (anvil)', () => {
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
});

import { NETWORKS } from '@meridian/networks';
import { jsonRpcErrorOf, parseRequest } from '@meridian/jsonrpc';
import { SpendEstimate } from '../credentials/spend-estimate';
import { planCalls, planRules, SORT } from './call-plan';
import { PLAN_REQUIRED } from './gateway-errors';

describe('planCalls (the relay sorts every call before any I/O)', () => {
  const network = NETWORKS['eth-mainnet'];
  const hash = `0x${'ab'.repeat(32)}`;
  const cache = new Map([[`eth-mainnet|eth_getBlockByHash|["${hash}",false]`, '{"number":"0x1"}']]);
  const rules = planRules(100, 64, { get: (key) => cache.get(key) });
  const items = (text: string) => {
    const parsed = parseRequest(text, { maxBatchSize: 100 });
    return parsed.kind === 'single' ? [parsed.item] : parsed.items;
  };

  it('sorts a batch: invalid, refused, local, cached, relayed, session', () => {
    const batch = items(
      JSON.stringify([
        { jsonrpc: '1.0', id: 1, method: 'eth_blockNumber' },
        { jsonrpc: '2.0', id: 2, method: 'no_suchMethod', params: [] },
        { jsonrpc: '2.0', id: 3, method: 'eth_chainId', params: [] },
        { jsonrpc: '2.0', id: 4, method: 'eth_getBlockByHash', params: [hash, false] },
        { jsonrpc: '2.0', id: 5, method: 'eth_blockNumber', params: [] },
        {
          jsonrpc: '2.0',
          id: 6,
          method: 'eth_getBlockByHash',
          params: [`0x${'cd'.repeat(32)}`, false],
        },
        { jsonrpc: '2.0', id: 7, method: 'eth_subscribe', params: ['newHeads'] },
        {
          jsonrpc: '2.0',
          id: 8,
          method: 'eth_getLogs',
          params: [{ fromBlock: '0x0', toBlock: '0xffff' }],
        },
      ]),
    );
    const plan = planCalls(network, batch, rules, 'websocket', 1_000, true);
    expect(plan.sorts).toEqual([
      SORT.INVALID,
      SORT.REFUSED,
      SORT.LOCAL,
      SORT.CACHED,
      SORT.RELAYED,
      SORT.RELAYED_CACHEABLE,
      SORT.SESSION,
      SORT.REFUSED,
    ]);
    expect(plan.statuses).toEqual([
      '-32600',
      '-32601',
      'ok',
      'ok',
      undefined,
      undefined,
      undefined,
      '-32005',
    ]);
    expect(plan.relayedAt).toEqual([4, 5]);
    expect(plan.relayed.map((c) => c.method)).toEqual(['eth_blockNumber', 'eth_getBlockByHash']);
    expect(plan.cacheKeys[0]).toBeUndefined();
    expect(plan.cacheKeys[1]).toBeDefined();
    expect(plan.sessionAt).toEqual([6]);
    expect(JSON.parse(plan.answers[3]!)).toEqual({
      jsonrpc: '2.0',
      id: 4,
      result: { number: '0x1' },
    });
  });

  it('over HTTP a WebSocket-only method is refused, not given to a session', () => {
    const plan = planCalls(
      network,
      items('{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}'),
      rules,
      'http',
      undefined,
      false,
    );
    expect(plan.sorts).toEqual([SORT.REFUSED]);
    expect(JSON.parse(plan.answers[0]!)).toMatchObject({ error: { code: -32601 } });
  });

  it("an eth_getLogs range ending at the head is judged against the pool's head (ADR 0211)", () => {
    const open = items(
      '{"jsonrpc":"2.0","id":1,"method":"eth_getLogs","params":[{"fromBlock":"0x0"}]}',
    );
    const at = (head: number | undefined) => planCalls(network, open, rules, 'http', head, false);
    expect(at(1_000).sorts).toEqual([SORT.REFUSED]);
    expect(at(1_000).statuses).toEqual(['-32005']);
    expect(at(99).sorts).toEqual([SORT.RELAYED]);
    expect(at(100).statuses).toEqual(['-32005']);
    expect(at(undefined).statuses).toEqual(['-32000']);
  });

  it('takes the CU of every billed call from the spend estimate and refuses, per call, what it no longer covers', () => {
    const estimate = new SpendEstimate();
    // Three calls of 20 CU: the third takes it below zero (the ledger lets it overdraw).
    estimate.reset(7, 50);
    const batch = items(
      JSON.stringify([
        { jsonrpc: '1.0', id: 1, method: 'eth_blockNumber' },
        { jsonrpc: '2.0', id: 2, method: 'no_suchMethod', params: [] },
        { jsonrpc: '2.0', id: 3, method: 'eth_chainId', params: [] },
        { jsonrpc: '2.0', id: 4, method: 'eth_blockNumber', params: [] },
        { jsonrpc: '2.0', id: 5, method: 'eth_getBlockByHash', params: [hash, false] },
        { jsonrpc: '2.0', id: 6, method: 'eth_blockNumber', params: [] },
        { jsonrpc: '2.0', id: 7, method: 'eth_chainId', params: [] },
      ]),
    );
    const plan = planCalls(network, batch, rules, 'http', 1_000, false, estimate, PLAN_REQUIRED);
    // Invalid and refused calls are not billed and take nothing.
    expect(plan.sorts).toEqual([
      SORT.INVALID,
      SORT.REFUSED,
      SORT.LOCAL,
      SORT.RELAYED,
      SORT.CACHED,
      SORT.REFUSED,
      SORT.REFUSED,
    ]);
    expect(estimate.remainingCu).toBe(-10);
    expect(plan.relayedAt).toEqual([3]);
    expect(plan.statuses.slice(5)).toEqual(['-32040', '-32040']);
    expect(JSON.parse(plan.answers[6]!)).toEqual({
      jsonrpc: '2.0',
      id: 7,
      error: jsonRpcErrorOf(PLAN_REQUIRED),
    });
    expect(plan.spend).toBe(estimate);
  });
});

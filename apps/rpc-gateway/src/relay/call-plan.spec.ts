import { NETWORKS } from '@meridian/networks';
import { jsonRpcErrorOf, parseRequest } from '@meridian/jsonrpc';
import { isCacheableResult } from '../cache/cache-policy';
import { SpendEstimate } from '../credentials/spend-estimate';
import { planCalls, planRules, SORT } from './call-plan';
import { PLAN_REQUIRED } from './gateway-errors';

describe('planCalls (the relay sorts every call before any I/O)', () => {
  const network = NETWORKS['eth-mainnet'];
  const hash = `0x${'ab'.repeat(32)}`;
  const cache = new Map([[`eth-mainnet|eth_getBlockByHash|["${hash}",false]`, '{"number":"0x1"}']]);
  const rules = planRules(100, { get: (key) => cache.get(key) });
  const items = (text: string) => {
    const parsed = parseRequest(text, { maxBatchSize: 100 });
    return parsed.kind === 'single' ? [parsed.item] : parsed.items;
  };

  it.each([
    // QA: the indexer retracts reorgs up to 128 deep (webhooks say `removed`) while the cache
    // took head − 64 as final and kept answering the orphaned block until a restart.
    // The indexer keeps head − 127 … head: a reorg it can retract keeps head − 127 at most
    // (the common ancestor), so head − 128 is final and nothing above it is.
    ['eth-mainnet', 100, false],
    ['eth-mainnet', 127, false],
    ['eth-mainnet', 128, true],
    // P's window is 256: its reorgs have gone deeper than 64.
    ['polygon-mainnet', 200, false],
    ['polygon-mainnet', 255, false],
    ['polygon-mainnet', 256, true],
  ] as const)(
    'nothing within the reorg window is cached as final: %s, %i below the head, final=%s',
    (key, depth, final) => {
      const head = 10_000;
      const number = `0x${(head - depth).toString(16)}`;
      const plan = planCalls(
        NETWORKS[key],
        items(
          JSON.stringify([
            { jsonrpc: '2.0', id: 1, method: 'eth_getBlockByNumber', params: [number, false] },
            { jsonrpc: '2.0', id: 2, method: 'eth_getTransactionReceipt', params: [hash] },
          ]),
        ),
        rules,
        'http',
        head,
        false,
      );
      expect(plan.cacheKeys[0] !== undefined).toBe(final);
      // A receipt mined at that height is stored only when final.
      const receipt = { blockHash: hash, blockNumber: number };
      expect(isCacheableResult('eth_getTransactionReceipt', receipt, plan.finalized)).toBe(final);
    },
  );

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

import type { NetworkKey } from '@meridian/networks';
import { Registry } from 'prom-client';
import { GatewayMetrics } from '../observability/gateway-metrics';
import { FILTER_SEAL_HEX, FilterIdSeal } from './filter-id';
import type { FailureKind } from './send-policy';
import type { UpstreamPool } from './upstream-pool';
import { UpstreamRouter, type CallAnswer, type OutCall } from './upstream-router';

const ACCOUNT = 'acct-a';
const FILTER_ID_KEY = 'k'.repeat(32);
/** A filter id as the router hands it to ACCOUNT: `unsealed` and its seal. */
const sealed = (unsealed: string) =>
  new FilterIdSeal(FILTER_ID_KEY, 'eu').seal(unsealed, 'eth-mainnet', ACCOUNT);

type Outcome = { ok: true; text: string } | { ok: false; failure: FailureKind; reason: string };

/**
 * A fake node: records every body posted to it and answers each call with
 * `<method>(<params>)`, or fails with `down` when set.
 */
function fakeNode(index: number) {
  const node = {
    index,
    label: `${index}:node`,
    spec: { tag: `0000000${index}`, floorTag: `f000000${index}` },
    healthy: true,
    height: undefined,
    inFlight: 0,
    lastError: undefined as string | undefined,
    bodies: [] as unknown[],
    down: undefined as FailureKind | undefined,
    async post(body: string): Promise<Outcome> {
      node.bodies.push(JSON.parse(body));
      if (node.down !== undefined) return { ok: false, failure: node.down, reason: 'down' };
      const answer = (c: { id: unknown; method: string; params: unknown[] }) => ({
        jsonrpc: '2.0',
        id: c.id,
        // A node's filter id is a quantity; everything else echoes the call.
        result: c.method.startsWith('eth_new') ? '0xf1' : `${c.method}(${c.params.join(',')})`,
      });
      const parsed = JSON.parse(body);
      return {
        ok: true,
        text: JSON.stringify(Array.isArray(parsed) ? parsed.map(answer) : answer(parsed)),
      };
    },
  };
  return node;
}

function setup(batchMax: number, nodesPerPool = 1, maxLogsBlockRange?: number) {
  const nodes = new Map<NetworkKey, ReturnType<typeof fakeNode>[]>();
  const pools = new Map<NetworkKey, UpstreamPool>();
  for (const network of ['eth-mainnet', 'polygon-mainnet', 'sui-mainnet'] as const) {
    const upstreams = Array.from({ length: nodesPerPool }, (_, i) => fakeNode(i));
    nodes.set(network, upstreams);
    pools.set(network, {
      network,
      upstreams,
      pick: (tried: ReadonlySet<number>) => upstreams.find((u) => !tried.has(u.index)),
      byTag: (tag: string) => upstreams.find((u) => u.spec.tag === tag),
      byFloorTag: (tag: string) => upstreams.find((u) => u.spec.floorTag === tag),
      headHeight: undefined as number | undefined,
    } as never);
  }
  const metrics = new GatewayMetrics(new Registry());
  const batchSizes: [string, number][] = [];
  jest
    .spyOn(metrics, 'observeUpstreamBatch')
    .mockImplementation((network, size) => void batchSizes.push([network, size]));
  const router = new UpstreamRouter(pools, metrics, {
    timeoutMs: 1_000,
    maxAttempts: 3,
    batchMax,
    maxLogsBlockRange,
    filterIds: new FilterIdSeal(FILTER_ID_KEY, 'eu'),
  });
  const bodies = (network: NetworkKey, node = 0) => nodes.get(network)![node]!.bodies;
  return { router, nodes, pools, bodies, batchSizes };
}

const call = (method: string, ...params: string[]): OutCall => ({
  method,
  params,
  paramsRaw: JSON.stringify(params),
});
const results = (answers: CallAnswer[]) =>
  answers.map((a) => (a.kind === 'result' ? JSON.parse(a.resultText) : a.kind));
/** The methods of each body a node received: a string for a single request, an array for a batch. */
const shapes = (bodies: unknown[]) =>
  bodies.map((b) =>
    Array.isArray(b)
      ? b.map((c: { method: string }) => c.method)
      : (b as { method: string }).method,
  );

describe('UpstreamRouter: same-turn coalescing', () => {
  it('single calls of one turn reach the node as one batch; each caller gets its own answer', async () => {
    const { router, bodies, batchSizes } = setup(20);
    const answers = await Promise.all([
      router.send('eth-mainnet', ACCOUNT, [call('eth_getBalance', '0xa')]),
      router.send('eth-mainnet', ACCOUNT, [call('eth_getBalance', '0xb')]),
      router.send('eth-mainnet', ACCOUNT, [call('eth_blockNumber')]),
    ]);
    expect(answers.map(results)).toEqual([
      ['eth_getBalance(0xa)'],
      ['eth_getBalance(0xb)'],
      ['eth_blockNumber()'],
    ]);
    expect(shapes(bodies('eth-mainnet'))).toEqual([
      ['eth_getBalance', 'eth_getBalance', 'eth_blockNumber'],
    ]);
    expect(batchSizes).toEqual([['eth-mainnet', 3]]);
  });

  it('a lone call is sent as a plain request, not a batch of one', async () => {
    const { router, bodies } = setup(20);
    expect(results(await router.send('eth-mainnet', ACCOUNT, [call('eth_blockNumber')]))).toEqual([
      'eth_blockNumber()',
    ]);
    expect(shapes(bodies('eth-mainnet'))).toEqual(['eth_blockNumber']);
  });

  it('a client batch of coalescible calls joins the turn; its answers stay in its order', async () => {
    const { router, bodies } = setup(20);
    const [batch, single] = await Promise.all([
      router.send('eth-mainnet', ACCOUNT, [call('eth_getBalance', '0x1'), call('eth_gasPrice')]),
      router.send('eth-mainnet', ACCOUNT, [call('eth_getBalance', '0x2')]),
    ]);
    expect(results(batch)).toEqual(['eth_getBalance(0x1)', 'eth_gasPrice()']);
    expect(results(single)).toEqual(['eth_getBalance(0x2)']);
    expect(shapes(bodies('eth-mainnet'))).toEqual([
      ['eth_getBalance', 'eth_gasPrice', 'eth_getBalance'],
    ]);
  });

  it.each(['eth_call', 'eth_getLogs', 'debug_traceTransaction', 'eth_sendRawTransaction'])(
    '%s keeps its own exchange',
    async (method) => {
      const { router, bodies } = setup(20);
      await Promise.all([
        router.send('eth-mainnet', ACCOUNT, [call(method, '0x1')]),
        router.send('eth-mainnet', ACCOUNT, [call('eth_blockNumber')]),
        router.send('eth-mainnet', ACCOUNT, [call('eth_gasPrice')]),
      ]);
      expect(shapes(bodies('eth-mainnet'))).toEqual([method, ['eth_blockNumber', 'eth_gasPrice']]);
    },
  );

  it('a client batch with one non-coalescible call keeps its own exchange, as before', async () => {
    const { router, bodies } = setup(20);
    await Promise.all([
      router.send('eth-mainnet', ACCOUNT, [call('eth_call', '0x1'), call('eth_getBalance', '0x1')]),
      router.send('eth-mainnet', ACCOUNT, [call('eth_blockNumber')]),
    ]);
    expect(shapes(bodies('eth-mainnet'))).toEqual([
      ['eth_call', 'eth_getBalance'],
      'eth_blockNumber',
    ]);
  });

  it('filters are never coalesced', async () => {
    const { router, bodies } = setup(20);
    await Promise.all([
      router.send('eth-mainnet', ACCOUNT, [call('eth_newBlockFilter')]),
      router.send('eth-mainnet', ACCOUNT, [call('eth_blockNumber')]),
      router.send('eth-mainnet', ACCOUNT, [call('eth_gasPrice')]),
    ]);
    expect(shapes(bodies('eth-mainnet'))).toEqual([
      'eth_newBlockFilter',
      ['eth_blockNumber', 'eth_gasPrice'],
    ]);
  });

  it('network S is never coalesced', async () => {
    const { router, bodies, batchSizes } = setup(20);
    await Promise.all([
      router.send('sui-mainnet', ACCOUNT, [call('suix_getLatestSuiSystemState')]),
      router.send('sui-mainnet', ACCOUNT, [call('suix_getLatestSuiSystemState')]),
    ]);
    expect(shapes(bodies('sui-mainnet'))).toEqual([
      'suix_getLatestSuiSystemState',
      'suix_getLatestSuiSystemState',
    ]);
    expect(batchSizes).toEqual([]);
  });

  it('UPSTREAM_BATCH_MAX=1 sends every request on its own', async () => {
    const { router, bodies, batchSizes } = setup(1);
    await Promise.all([
      router.send('eth-mainnet', ACCOUNT, [call('eth_blockNumber')]),
      router.send('eth-mainnet', ACCOUNT, [call('eth_gasPrice')]),
    ]);
    expect(shapes(bodies('eth-mainnet'))).toEqual(['eth_blockNumber', 'eth_gasPrice']);
    expect(batchSizes).toEqual([]);
  });

  it('a coalesced exchange whose node fails is sent whole to the next node', async () => {
    const { router, nodes, bodies } = setup(20, 2);
    nodes.get('eth-mainnet')![0]!.down = 'ambiguous';
    const answers = await Promise.all([
      router.send('eth-mainnet', ACCOUNT, [call('eth_getBalance', '0xa')]),
      router.send('eth-mainnet', ACCOUNT, [call('eth_blockNumber')]),
    ]);
    expect(answers.map(results)).toEqual([['eth_getBalance(0xa)'], ['eth_blockNumber()']]);
    expect(shapes(bodies('eth-mainnet', 0))).toEqual([['eth_getBalance', 'eth_blockNumber']]);
    expect(shapes(bodies('eth-mainnet', 1))).toEqual([['eth_getBalance', 'eth_blockNumber']]);
  });
});

describe('UpstreamRouter: a filter belongs to the account that made it (ADR 0202)', () => {
  const FILTER_USES = ['eth_getFilterChanges', 'eth_getFilterLogs', 'eth_uninstallFilter'];

  it.each(['eth_newFilter', 'eth_newBlockFilter', 'eth_newPendingTransactionFilter'])(
    '%s: its id works for its account only; any other caller gets "filter not found" and no node is asked',
    async (create) => {
      const { router, bodies } = setup(1);
      const [created] = await router.send('eth-mainnet', ACCOUNT, [call(create)]);
      const id = JSON.parse((created as { resultText: string }).resultText) as string;
      const notFound = { kind: 'gateway_error', error: { code: 'filter_not_found' } };
      // Another account, the same account on another network; then ids no one was given.
      for (const [network, account] of [
        ['eth-mainnet', 'acct-b'],
        ['polygon-mainnet', ACCOUNT],
      ] as const)
        for (const method of FILTER_USES)
          expect(await router.send(network, account, [call(method, id)])).toMatchObject([notFound]);
      const edited = `${id.slice(0, -1)}${id.endsWith('0') ? '1' : '0'}`;
      for (const other of [edited, id.slice(0, -FILTER_SEAL_HEX), '0xdeadbeef'])
        expect(
          await router.send('eth-mainnet', ACCOUNT, [call('eth_getFilterChanges', other)]),
        ).toMatchObject([notFound]);
      expect(bodies('polygon-mainnet')).toEqual([]);
      expect(shapes(bodies('eth-mainnet'))).toEqual([create]);
      // Its own account: relayed with the node's own id.
      expect(
        results(
          await router.send('eth-mainnet', ACCOUNT, [
            call('eth_getFilterChanges', id),
            call('eth_uninstallFilter', id),
          ]),
        ),
      ).toEqual(['eth_getFilterChanges(0xf1)', 'eth_uninstallFilter(0xf1)']);
    },
  );

  it('on a network without nodes here, a filter call is "filter not found" (not "upstream unavailable"), unbilled', async () => {
    const { router, pools } = setup(1);
    const [created] = await router.send('eth-mainnet', ACCOUNT, [call('eth_newBlockFilter')]);
    const id = JSON.parse((created as { resultText: string }).resultText) as string;
    // QA: a filter made with one network's token, read with the token of a network whose
    // pool has no node at this endpoint.
    pools.delete('polygon-mainnet');
    const notFound = { kind: 'gateway_error', error: { code: 'filter_not_found' } };
    for (const method of ['eth_getFilterChanges', 'eth_getFilterLogs', 'eth_uninstallFilter'])
      expect(await router.send('polygon-mainnet', ACCOUNT, [call(method, id)])).toMatchObject([
        notFound,
      ]);
    expect(await router.send('polygon-mainnet', ACCOUNT, [call('eth_blockNumber')])).toMatchObject([
      { kind: 'gateway_error', error: { code: 'upstream_unavailable' } },
    ]);
  });

  it('the seal is made with the key: another key (a replica configured otherwise) opens none', async () => {
    const { router } = setup(1);
    const [created] = await router.send('eth-mainnet', ACCOUNT, [call('eth_newBlockFilter')]);
    const id = JSON.parse((created as { resultText: string }).resultText) as string;
    const other = new FilterIdSeal('o'.repeat(32), 'eu');
    expect(other.open(id, 'eth-mainnet', ACCOUNT)).toBeUndefined();
    expect(new FilterIdSeal(FILTER_ID_KEY, 'us').open(id, 'eth-mainnet', ACCOUNT)).toBeUndefined();
    expect(new FilterIdSeal(FILTER_ID_KEY, 'eu').open(id, 'eth-mainnet', ACCOUNT)).toBe(
      id.slice(0, -FILTER_SEAL_HEX),
    );
  });
});

describe('UpstreamRouter: a log filter whose range grows with the chain (ADR 0211)', () => {
  const newFilter = (filter: unknown): OutCall => ({
    method: 'eth_newFilter',
    params: [filter],
    paramsRaw: JSON.stringify([filter]),
  });
  const setHead = (pools: Map<NetworkKey, UpstreamPool>, head: number | undefined) =>
    ((pools.get('eth-mainnet') as { headHeight: number | undefined }).headHeight = head);

  it('carries its fromBlock in its id; eth_getFilterLogs is refused once fromBlock..head passes the cap', async () => {
    const { router, pools, bodies } = setup(1, 1, 100);
    const [created] = await router.send('eth-mainnet', ACCOUNT, [newFilter({ fromBlock: '0x10' })]);
    const id = JSON.parse((created as { resultText: string }).resultText) as string;
    expect(id).toBe(sealed(`0xf0000000${'10'.padStart(12, '0')}f1`));
    expect(id).toHaveLength(2 + 8 + 12 + 2 + FILTER_SEAL_HEX);
    setHead(pools, 0x10 + 99);
    expect(
      results(await router.send('eth-mainnet', ACCOUNT, [call('eth_getFilterLogs', id)])),
    ).toEqual(['eth_getFilterLogs(0xf1)']);
    setHead(pools, 0x10 + 100);
    // A fromBlock edited to pass the cap breaks the seal: an unknown id, not a read.
    const edited = id.replace(`${'10'.padStart(12, '0')}f1`, `${'20'.padStart(12, '0')}f1`);
    expect(edited).not.toBe(id);
    expect(
      await router.send('eth-mainnet', ACCOUNT, [call('eth_getFilterLogs', edited)]),
    ).toMatchObject([{ kind: 'gateway_error', error: { code: 'filter_not_found' } }]);
    const [refused] = await router.send('eth-mainnet', ACCOUNT, [call('eth_getFilterLogs', id)]);
    expect(refused).toMatchObject({ kind: 'gateway_error', error: { code: 'limit_exceeded' } });
    // Its changes are not ranged, and it can still be removed.
    expect(
      results(
        await router.send('eth-mainnet', ACCOUNT, [
          call('eth_getFilterChanges', id),
          call('eth_uninstallFilter', id),
        ]),
      ),
    ).toEqual(['eth_getFilterChanges(0xf1)', 'eth_uninstallFilter(0xf1)']);
    setHead(pools, undefined);
    const [unknown] = await router.send('eth-mainnet', ACCOUNT, [call('eth_getFilterLogs', id)]);
    expect(unknown).toMatchObject({ kind: 'gateway_error', error: { code: 'head_unknown' } });
    expect(shapes(bodies('eth-mainnet'))).toEqual([
      'eth_newFilter',
      'eth_getFilterLogs',
      'eth_getFilterChanges',
      'eth_uninstallFilter',
    ]);
  });

  it.each([
    ['both ends fixed', { fromBlock: '0x10', toBlock: '0x20' }],
    ['both ends at the head', { fromBlock: 'latest' }],
    ['a block hash', { blockHash: `0x${'ab'.repeat(32)}` }],
  ])('a filter with %s keeps the plain id', async (_name, filter) => {
    const { router } = setup(1, 1, 100);
    const [created] = await router.send('eth-mainnet', ACCOUNT, [newFilter(filter)]);
    expect(JSON.parse((created as { resultText: string }).resultText)).toBe(sealed('0x00000000f1'));
  });
});

import type { NetworkKey } from '@meridian/networks';
import { Registry } from 'prom-client';
import { GatewayMetrics } from '../observability/gateway-metrics';
import { AnswerBudget, AnswersInFlight, type AnswerRead } from './answer-budget';
import { FILTER_SEAL_HEX, FilterIdSeal } from './filter-id';
import type { FailureKind } from './send-policy';
import { UpstreamPool } from './upstream-pool';
import { CALL_ABANDONED } from '../relay/gateway-errors';
import {
  ABANDONABLE_SLICE,
  isBilled,
  SLICES_IN_FLIGHT,
  UpstreamRouter,
  type CallAnswer,
  type OutCall,
} from './upstream-router';

const ACCOUNT = 'acct-a';
const FILTER_ID_KEY = 'k'.repeat(32);
/** A filter id as the router hands it to ACCOUNT: `unsealed` and its seal. */
const sealed = (unsealed: string) =>
  new FilterIdSeal(FILTER_ID_KEY, 'eu').seal(unsealed, 'eth-mainnet', ACCOUNT);

type Outcome = { ok: true; text: string } | { ok: false; failure: FailureKind; reason: string };

/**
 * A fake node (the transport of one upstream): records every body posted to it and answers
 * each call with `<method>(<params>)`, or fails with `down` when set; `answer` overrides.
 */
function fakeNode(index: number) {
  const node = {
    index,
    bodies: [] as unknown[],
    down: undefined as FailureKind | undefined,
    /** Scripted answer text for a body, or undefined for the echo. */
    answer: undefined as ((body: unknown) => string | undefined) | undefined,
    /** `maxBytes`: a longer answer is `too_large`, as HttpTransport stops its read. */
    async post(
      body: string,
      _timeoutMs: number,
      maxBytes: number,
      read?: AnswerRead,
    ): Promise<Outcome> {
      const parsed = JSON.parse(body);
      node.bodies.push(parsed);
      if (node.down !== undefined) return { ok: false, failure: node.down, reason: 'down' };
      const scripted = node.answer?.(parsed);
      if (scripted !== undefined && scripted.length > maxBytes)
        return { ok: false, failure: 'too_large', reason: 'too large' };
      // The worker's budget in flight, as HttpTransport grows it while reading (ADR 0215).
      if (scripted !== undefined && read !== undefined && !read.grow(scripted.length))
        return { ok: false, failure: 'busy', reason: 'busy' };
      if (scripted !== undefined) return { ok: true, text: scripted };
      const answer = (c: { id: unknown; method: string; params: unknown[] }) => ({
        jsonrpc: '2.0',
        id: c.id,
        // A node's filter id is a quantity; everything else echoes the call.
        result: c.method.startsWith('eth_new') ? '0xf1' : `${c.method}(${c.params.join(',')})`,
      });
      return {
        ok: true,
        text: JSON.stringify(Array.isArray(parsed) ? parsed.map(answer) : answer(parsed)),
      };
    },
    close: async () => undefined,
  };
  return node;
}

const spec = (i: number) => ({
  url: `http://node${i}.test:8545`,
  wsUrl: `ws://node${i}.test:8545`,
  tag: `0000000${i}`,
  floorTag: `f000000${i}`,
});

function setup(
  batchMax: number,
  nodesPerPool = 1,
  maxLogsBlockRange?: number,
  clock = { now: 0 },
  logger?: { warn: jest.Mock; info: jest.Mock },
  maxResponseBytes = 32 * 1024 * 1024,
  answersInFlight?: AnswersInFlight,
) {
  const nodes = new Map<NetworkKey, ReturnType<typeof fakeNode>[]>();
  const pools = new Map<NetworkKey, UpstreamPool>();
  for (const network of ['eth-mainnet', 'polygon-mainnet', 'sui-mainnet'] as const) {
    const transports = Array.from({ length: nodesPerPool }, (_, i) => fakeNode(i));
    nodes.set(network, transports);
    let next = 0;
    pools.set(
      network,
      new UpstreamPool(
        network,
        transports.map((_, i) => spec(i)),
        {
          maxLagBlocks: 5,
          connections: 1,
          now: () => clock.now,
          transport: () => transports[next++]!,
        },
      ),
    );
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
    maxResponseBytes,
    answersInFlight,
    filterIds: new FilterIdSeal(FILTER_ID_KEY, 'eu'),
    logger,
  });
  const bodies = (network: NetworkKey, node = 0) => nodes.get(network)![node]!.bodies;
  return { router, nodes, pools, bodies, batchSizes, metrics, clock };
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
  const FILTER_READS = ['eth_getFilterChanges', 'eth_getFilterLogs'];
  /** What a node answers an id it does not have: "filter not found", and `false` to uninstall. */
  const notFound = { kind: 'gateway_error', error: { code: 'filter_not_found' } };
  const uninstalledNothing = { kind: 'result', resultText: 'false' };

  it.each(['eth_newFilter', 'eth_newBlockFilter', 'eth_newPendingTransactionFilter'])(
    '%s: its id works for its account only; any other caller gets "filter not found" (uninstall: false) and no node is asked',
    async (create) => {
      const { router, bodies } = setup(1);
      const [created] = await router.send('eth-mainnet', ACCOUNT, [call(create)]);
      const id = JSON.parse((created as { resultText: string }).resultText) as string;
      // Another account, the same account on another network; then ids no one was given.
      for (const [network, account] of [
        ['eth-mainnet', 'acct-b'],
        ['polygon-mainnet', ACCOUNT],
      ] as const) {
        for (const method of FILTER_READS)
          expect(await router.send(network, account, [call(method, id)])).toMatchObject([notFound]);
        // QA: -32000 here, while the node answers false for a filter already removed.
        const [uninstall] = await router.send(network, account, [call('eth_uninstallFilter', id)]);
        expect(uninstall).toEqual(uninstalledNothing);
        expect(isBilled(uninstall!)).toBe(true);
      }
      const edited = `${id.slice(0, -1)}${id.endsWith('0') ? '1' : '0'}`;
      for (const other of [edited, id.slice(0, -FILTER_SEAL_HEX), '0xdeadbeef']) {
        expect(
          await router.send('eth-mainnet', ACCOUNT, [call('eth_getFilterChanges', other)]),
        ).toMatchObject([notFound]);
        expect(
          await router.send('eth-mainnet', ACCOUNT, [call('eth_uninstallFilter', other)]),
        ).toEqual([uninstalledNothing]);
      }
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

  it('on a network without nodes here, a filter call is "filter not found" (uninstall: false), not "upstream unavailable"', async () => {
    const { router, pools } = setup(1);
    const [created] = await router.send('eth-mainnet', ACCOUNT, [call('eth_newBlockFilter')]);
    const id = JSON.parse((created as { resultText: string }).resultText) as string;
    // QA: a filter made with one network's token, read with the token of a network whose
    // pool has no node at this endpoint.
    pools.delete('polygon-mainnet');
    for (const method of FILTER_READS)
      expect(await router.send('polygon-mainnet', ACCOUNT, [call(method, id)])).toMatchObject([
        notFound,
      ]);
    expect(
      await router.send('polygon-mainnet', ACCOUNT, [call('eth_uninstallFilter', id)]),
    ).toEqual([uninstalledNothing]);
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
    (pools.get('eth-mainnet')!.upstreams[0]!.height = head);

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

/** A JSON-RPC answer text of `body`'s calls, each from `answerOf`. */
const answerEach =
  (answerOf: (c: { id: number; method: string; params: unknown[] }) => object) =>
  (body: unknown): string => {
    const one = (c: { id: number; method: string; params: unknown[] }) =>
      JSON.stringify({ jsonrpc: '2.0', id: c.id, ...answerOf(c) });
    return Array.isArray(body) ? `[${body.map(one).join(',')}]` : one(body as never);
  };
const gatewayError = (code: string) => ({ kind: 'gateway_error', error: { code } });
const outcomes = async (metrics: GatewayMetrics) =>
  (await metrics.upstreamRequests.get()).values
    .filter((v) => v.value > 0)
    .map((v) => `${v.labels.upstream} ${v.labels.outcome} ${v.value}`)
    .sort();

describe('UpstreamRouter: a node that fails is taken out of rotation (breaker, ADR 0202)', () => {
  it('every node hung: after 3 failed attempts each, calls answer at once, unsent; a trial after the cooldown closes it', async () => {
    const logger = { warn: jest.fn(), info: jest.fn() };
    const { router, nodes, pools, bodies, metrics, clock } = setup(
      1,
      2,
      undefined,
      { now: 0 },
      logger,
    );
    const [a, b] = nodes.get('eth-mainnet')!;
    a!.down = 'ambiguous';
    b!.down = 'ambiguous';
    for (let i = 0; i < 3; i++)
      expect(
        await router.send('eth-mainnet', ACCOUNT, [call('eth_getBalance', '0xa')]),
      ).toMatchObject([gatewayError('upstream_unavailable')]);
    expect(bodies('eth-mainnet', 0)).toHaveLength(3);
    expect(bodies('eth-mainnet', 1)).toHaveLength(3);
    // QA: each such call waited 3 × the upstream timeout. Now nothing is sent.
    for (let i = 0; i < 20; i++)
      expect(
        await router.send('eth-mainnet', ACCOUNT, [call('eth_getBalance', '0xa')]),
      ).toMatchObject([gatewayError('upstream_unavailable')]);
    expect(bodies('eth-mainnet', 0)).toHaveLength(3);
    expect(bodies('eth-mainnet', 1)).toHaveLength(3);
    expect(logger.warn).toHaveBeenCalledTimes(2);
    expect(logger.warn.mock.calls[0]![0]).toMatchObject({
      network: 'eth-mainnet',
      cooldownMs: 5_000,
    });
    const open = await metrics.upstreamBreakerOpen.get();
    expect(
      open.values.filter((v) => v.labels.network === 'eth-mainnet').map((v) => v.value),
    ).toEqual([1, 1]);
    // After the cooldown, nodes still failing their checks get no trial: no call waits for them.
    clock.now = 5_000;
    const pool = pools.get('eth-mainnet')!;
    for (const u of pool.upstreams) expect(u.healthy).toBe(false);
    expect(
      await router.send('eth-mainnet', ACCOUNT, [call('eth_getBalance', '0xa')]),
    ).toMatchObject([gatewayError('upstream_unavailable')]);
    expect(bodies('eth-mainnet', 0)).toHaveLength(3);
    // A node back (its check passed): one call is its trial, answered, and the breaker closes.
    a!.down = undefined;
    b!.down = undefined;
    pool.upstreams[0]!.healthy = true;
    expect(
      results(await router.send('eth-mainnet', ACCOUNT, [call('eth_getBalance', '0xb')])),
    ).toEqual(['eth_getBalance(0xb)']);
    expect(logger.info).toHaveBeenCalledTimes(1);
    expect(logger.info.mock.calls[0]![1]).toMatch(/closed/);
  });

  it('a node answering calls with 5xx/HTML/broken JSON leaves rotation after 3 (QA: 19 of 20 went to it first)', async () => {
    const { router, nodes, bodies, metrics } = setup(1, 2);
    const [bad] = nodes.get('eth-mainnet')!;
    let n = 0;
    bad!.post = async (body: string) => {
      bad!.bodies.push(JSON.parse(body));
      const texts = ['<html>502</html>', '{"jsonrpc":"2.0","id":0,"res', 'Bad Gateway'];
      return n++ % 2 === 0
        ? { ok: false, failure: 'bad_answer', reason: 'HTTP 502' }
        : { ok: true, text: texts[n % 3]! };
    };
    for (let i = 0; i < 20; i++)
      expect(
        results(await router.send('eth-mainnet', ACCOUNT, [call('eth_getBalance', '0xa')])),
      ).toEqual(['eth_getBalance(0xa)']);
    expect(bodies('eth-mainnet', 0)).toHaveLength(3);
    expect(bodies('eth-mainnet', 1)).toHaveLength(20);
    expect(await outcomes(metrics)).toEqual([
      '0:node0.test:8545 bad_answer 3',
      '1:node1.test:8545 ok 20',
    ]);
  });

  it('a filter pinned to a node whose breaker is open answers at once, unsent', async () => {
    const { router, nodes, bodies } = setup(1, 1);
    const [created] = await router.send('eth-mainnet', ACCOUNT, [call('eth_newBlockFilter')]);
    const id = JSON.parse((created as { resultText: string }).resultText) as string;
    nodes.get('eth-mainnet')![0]!.down = 'ambiguous';
    for (let i = 0; i < 3; i++)
      await router.send('eth-mainnet', ACCOUNT, [call('eth_getBalance', '0x1')]);
    expect(
      await router.send('eth-mainnet', ACCOUNT, [call('eth_getFilterChanges', id)]),
    ).toMatchObject([gatewayError('upstream_unavailable')]);
    expect(shapes(bodies('eth-mainnet'))).toEqual([
      'eth_newBlockFilter',
      'eth_getBalance',
      'eth_getBalance',
      'eth_getBalance',
    ]);
  });
});

describe('UpstreamRouter: a throttled node is not an answer (HTTP 429, its rate-limit errors)', () => {
  it.each([
    ['HTTP 429', { ok: false, failure: 'throttled', reason: 'HTTP 429' } as Outcome],
    [
      '-32005 rate limit',
      {
        ok: true,
        text: '{"jsonrpc":"2.0","id":0,"error":{"code":-32005,"message":"rate limit exceeded"}}',
      } as Outcome,
    ],
    [
      '-32029 too many requests',
      {
        ok: true,
        text: '{"jsonrpc":"2.0","id":0,"error":{"code":-32029,"message":"Too Many Requests: rate limited"}}',
      } as Outcome,
    ],
  ])(
    '%s: the call fails over; every node throttled answers -32000 unbilled; it counts towards the breaker',
    async (_name, throttled) => {
      const { router, nodes, metrics } = setup(1, 2);
      const [a, b] = nodes.get('eth-mainnet')!;
      a!.post = async () => throttled;
      expect(
        results(await router.send('eth-mainnet', ACCOUNT, [call('eth_getBalance', '0xa')])),
      ).toEqual(['eth_getBalance(0xa)']);
      b!.post = async () => throttled;
      const [answer] = await router.send('eth-mainnet', ACCOUNT, [call('eth_getBalance', '0xa')]);
      expect(answer).toMatchObject(gatewayError('upstream_unavailable'));
      expect(isBilled(answer!)).toBe(false);
      expect(await outcomes(metrics)).toEqual([
        '0:node0.test:8545 throttled 2',
        '1:node1.test:8545 ok 1',
        '1:node1.test:8545 throttled 1',
      ]);
    },
  );

  it("-32005 that is not a rate limit (a result too large) is the node's answer, relayed", async () => {
    const { router, nodes, bodies } = setup(1, 2);
    for (const node of nodes.get('eth-mainnet')!)
      node.answer = answerEach(() => ({
        error: { code: -32005, message: 'query returned more than 10000 results' },
      }));
    const [answer] = await router.send('eth-mainnet', ACCOUNT, [call('eth_getLogs', '0x1')]);
    expect(answer).toMatchObject({ kind: 'node_error', error: { code: -32005 } });
    expect(bodies('eth-mainnet', 0).length + bodies('eth-mainnet', 1).length).toBe(1);
  });
});

describe('UpstreamRouter: a node that lacks the data asked is not the answer while another has it', () => {
  it.each([
    ['header not found', -32000],
    ['unknown block', -32000],
    ['missing trie node 5f3e… (path )', -32000],
    ['the method eth_getBalance does not exist/is not available', -32601],
    // A node's "not implemented" in other words (anvil's -32603, EIP-1474's -32004): the same
    // gap as -32601, so another node is asked too (`nodeLacksMethod`, one rule with billing).
    ['Not implemented', -32603],
    ['method not supported', -32004],
  ])(
    '%s: the next node answers; when every node says so, its answer is relayed',
    async (message, code) => {
      const { router, nodes, bodies } = setup(1, 3);
      const [a, b, c] = nodes.get('eth-mainnet')!;
      a!.answer = answerEach(() => ({ error: { code, message } }));
      expect(
        results(await router.send('eth-mainnet', ACCOUNT, [call('eth_getBalance', '0xa')])),
      ).toEqual(['eth_getBalance(0xa)']);
      b!.answer = a!.answer;
      c!.answer = a!.answer;
      const [answer] = await router.send('eth-mainnet', ACCOUNT, [call('eth_getBalance', '0xa')]);
      expect(answer).toMatchObject({ kind: 'node_error', error: { code, message } });
      expect(isBilled(answer!)).toBe(code === -32000);
      expect(
        bodies('eth-mainnet', 0).length +
          bodies('eth-mainnet', 1).length +
          bodies('eth-mainnet', 2).length,
      ).toBe(5);
    },
  );

  it("-32601 for a method outside the network table, and a write's own error, are relayed without retry", async () => {
    const { router, nodes, bodies } = setup(1, 2);
    for (const node of nodes.get('eth-mainnet')!)
      node.answer = answerEach((c) => ({
        error:
          c.method === 'bor_getAuthor'
            ? { code: -32601, message: 'the method bor_getAuthor does not exist' }
            : { code: -32000, message: 'header not found' },
      }));
    for (const method of ['bor_getAuthor', 'eth_sendRawTransaction'])
      expect(await router.send('eth-mainnet', ACCOUNT, [call(method, '0x01')])).toMatchObject([
        { kind: 'node_error' },
      ]);
    expect(bodies('eth-mainnet', 0).length + bodies('eth-mainnet', 1).length).toBe(2);
  });

  it('in a coalesced batch only the calls a node lacked go on to the next node', async () => {
    const { router, nodes, bodies } = setup(20, 2);
    nodes.get('eth-mainnet')![0]!.answer = answerEach((c) =>
      c.method === 'eth_getBalance'
        ? { error: { code: -32000, message: 'header not found' } }
        : { result: 'gas' },
    );
    const answers = await Promise.all([
      router.send('eth-mainnet', ACCOUNT, [call('eth_getBalance', '0xa')]),
      router.send('eth-mainnet', ACCOUNT, [call('eth_gasPrice')]),
    ]);
    expect(answers.map(results)).toEqual([['eth_getBalance(0xa)'], ['gas']]);
    expect(shapes(bodies('eth-mainnet', 0))).toEqual([['eth_getBalance', 'eth_gasPrice']]);
    expect(shapes(bodies('eth-mainnet', 1))).toEqual(['eth_getBalance']);
  });
});

describe('UpstreamRouter: an answer under the wrong id is a bad answer of that node', () => {
  it.each([
    ['a single call answered under another id', 1, () => '{"jsonrpc":"2.0","id":7,"result":"0x1"}'],
    ['a single call answered without id', 1, () => '{"jsonrpc":"2.0","id":null,"result":"0x1"}'],
    ['a batch answered by one object', 2, () => '{"jsonrpc":"2.0","id":0,"result":"0x1"}'],
    [
      'a batch answered by one error object under an id',
      2,
      () => '{"jsonrpc":"2.0","id":0,"error":{"code":-32600,"message":"no"}}',
    ],
    [
      'a batch answered under other ids',
      2,
      () => '[{"jsonrpc":"2.0","id":5,"result":"0x1"},{"jsonrpc":"2.0","id":6,"result":"0x2"}]',
    ],
    [
      'a batch answered with one id twice',
      2,
      () => '[{"jsonrpc":"2.0","id":0,"result":"0x1"},{"jsonrpc":"2.0","id":0,"result":"0x2"}]',
    ],
  ])('%s: the next node answers; metric outcome bad_answer', async (_name, callCount, text) => {
    const { router, nodes, metrics } = setup(20, 2);
    nodes.get('eth-mainnet')![0]!.answer = text;
    const sent = Array.from({ length: callCount }, (_, i) =>
      router.send('eth-mainnet', ACCOUNT, [call('eth_getBalance', `0x${i}`)]),
    );
    expect((await Promise.all(sent)).map(results)).toEqual(
      Array.from({ length: callCount }, (_, i) => [`eth_getBalance(0x${i})`]),
    );
    expect(await outcomes(metrics)).toEqual([
      '0:node0.test:8545 bad_answer 1',
      '1:node1.test:8545 ok 1',
    ]);
  });

  it('every node answering under another id: -32603 node trouble, unbilled', async () => {
    const { router, nodes } = setup(1, 2);
    for (const node of nodes.get('eth-mainnet')!)
      node.answer = () => '{"jsonrpc":"2.0","id":7,"result":"0x1"}';
    const [answer] = await router.send('eth-mainnet', ACCOUNT, [call('eth_getBalance', '0x1')]);
    expect(answer).toMatchObject(gatewayError('upstream_error'));
    expect(isBilled(answer!)).toBe(false);
  });
});

describe('UpstreamRouter: an error under id null is the node refusing a request it could not read', () => {
  const REFUSAL = '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"too deep"}}';
  /** Like anvil past 128 nesting levels: a request with params `deep` is refused unread. */
  const refusesDeep = (body: unknown): string | undefined => {
    const isDeep = (c: { params: unknown[] }) => c.params[0] === 'deep';
    if (!Array.isArray(body)) return isDeep(body as never) ? REFUSAL : undefined;
    if (!body.some(isDeep)) return undefined;
    return JSON.stringify(
      body.map((c: { id: string; method: string; params: unknown[] }) =>
        isDeep(c)
          ? JSON.parse(REFUSAL)
          : { jsonrpc: '2.0', id: c.id, result: `${c.method}(${c.params.join(',')})` },
      ),
    );
  };

  it("a single call: that call's node error, relayed and billed; the node answered (QA: three opened its breaker)", async () => {
    const { router, nodes, bodies, metrics } = setup(1, 2);
    for (const node of nodes.get('eth-mainnet')!) node.answer = refusesDeep;
    for (let i = 0; i < 6; i++) {
      const [answer] = await router.send('eth-mainnet', ACCOUNT, [call('eth_call', 'deep')]);
      expect(answer).toMatchObject({ kind: 'node_error', error: { code: -32600 } });
      expect(isBilled(answer!)).toBe(true);
    }
    // Not failed over, and no breaker opened: both nodes still take calls.
    expect(bodies('eth-mainnet', 0).length + bodies('eth-mainnet', 1).length).toBe(6);
    for (const u of nodes.get('eth-mainnet')!) expect(u.bodies.length).toBeGreaterThan(0);
    // Counted as refused, not ok: the node answered, but not the call (QA: counted as ok).
    expect(await outcomes(metrics)).toEqual([
      '0:node0.test:8545 refused 3',
      '1:node1.test:8545 refused 3',
    ]);
    for (let i = 0; i < 4; i++)
      expect(
        results(await router.send('eth-mainnet', ACCOUNT, [call('eth_getBalance', '0xa')])),
      ).toEqual(['eth_getBalance(0xa)']);
    expect(bodies('eth-mainnet', 0)).toHaveLength(5);
  });

  it('a coalesced batch refused whole by one such object: each call is sent again alone; no breaker counts it', async () => {
    const { router, nodes, bodies, pools, metrics } = setup(20, 1);
    nodes.get('eth-mainnet')![0]!.answer = (body) =>
      Array.isArray(body) && body.some((c: { params: unknown[] }) => c.params[0] === 'deep')
        ? REFUSAL
        : refusesDeep(body);
    for (let round = 0; round < 4; round++) {
      const answers = await Promise.all([
        router.send('eth-mainnet', ACCOUNT, [call('eth_getBalance', '0xa')]),
        router.send('eth-mainnet', ACCOUNT, [call('eth_getCode', 'deep')]),
        router.send('eth-mainnet', ACCOUNT, [call('eth_getBalance', '0xb')]),
      ]);
      expect(answers.map(results)).toEqual([
        ['eth_getBalance(0xa)'],
        ['node_error'],
        ['eth_getBalance(0xb)'],
      ]);
    }
    expect(shapes(bodies('eth-mainnet')).slice(0, 4)).toEqual([
      ['eth_getBalance', 'eth_getCode', 'eth_getBalance'],
      'eth_getBalance',
      'eth_getCode',
      'eth_getBalance',
    ]);
    expect(bodies('eth-mainnet')).toHaveLength(16);
    expect(pools.get('eth-mainnet')!.upstreams[0]!.breaker.stateAt(0)).toBe('closed');
    // Per round: the batch and the deep call alone refused, the two balances answered.
    expect(await outcomes(metrics)).toEqual([
      '0:node0.test:8545 ok 8',
      '0:node0.test:8545 refused 8',
    ]);
  });

  it('a batch with one element refused: the answered calls keep their answers, that one goes alone', async () => {
    const { router, nodes, bodies, metrics } = setup(20, 1);
    nodes.get('eth-mainnet')![0]!.answer = refusesDeep;
    const answers = await Promise.all([
      router.send('eth-mainnet', ACCOUNT, [call('eth_getBalance', '0xa')]),
      router.send('eth-mainnet', ACCOUNT, [call('eth_getCode', 'deep')]),
    ]);
    expect(answers.map(results)).toEqual([['eth_getBalance(0xa)'], ['node_error']]);
    expect(shapes(bodies('eth-mainnet'))).toEqual([
      ['eth_getBalance', 'eth_getCode'],
      'eth_getCode',
    ]);
    // The batch was refused in part, the call alone whole: both attempts are refused.
    expect(await outcomes(metrics)).toEqual(['0:node0.test:8545 refused 2']);
  });
});

describe('UpstreamRouter: an answer past MAX_RESPONSE_BYTES (ADR 0215)', () => {
  const LIMIT = 1_000;
  /** Answers each call with a result of `n` characters for params ['<n>'] (the echo otherwise). */
  const sized = (body: unknown): string => {
    const answer = (c: { id: string; method: string; params: string[] }) => ({
      jsonrpc: '2.0',
      id: c.id,
      result: 'x'.repeat(Number(c.params[0]) - 2),
    });
    return JSON.stringify(Array.isArray(body) ? body.map(answer) : answer(body as never));
  };
  const logs = (size: number) => call('eth_getLogs', String(size));
  const limitError = (answer: CallAnswer | undefined) =>
    answer?.kind === 'gateway_error'
      ? { code: answer.error.code, kind: answer.error.kind, message: answer.error.message }
      : answer?.kind;

  it('a single call: -32005 under the call, unbilled; no failover, no breaker count (QA H1)', async () => {
    const { router, nodes, bodies, pools, metrics } = setup(
      1,
      2,
      undefined,
      undefined,
      undefined,
      LIMIT,
    );
    for (const node of nodes.get('eth-mainnet')!) node.answer = sized;
    for (let i = 0; i < 6; i++) {
      const [answer] = await router.send('eth-mainnet', ACCOUNT, [logs(5_000)]);
      expect(limitError(answer)).toEqual({
        code: 'response_too_large',
        kind: 'too_large',
        message:
          'limit exceeded: response too large: over 1000 bytes; narrow the block range or split the batch',
      });
      expect(isBilled(answer!)).toBe(false);
    }
    // Each call asked one node only (another would answer the same), and no breaker opened.
    expect(bodies('eth-mainnet', 0).length + bodies('eth-mainnet', 1).length).toBe(6);
    for (const u of pools.get('eth-mainnet')!.upstreams)
      expect(u.breaker.stateAt(0)).toBe('closed');
    for (const u of pools.get('eth-mainnet')!.upstreams) expect(u.healthy).toBe(true);
    expect(await outcomes(metrics)).toEqual([
      '0:node0.test:8545 too_large 3',
      '1:node1.test:8545 too_large 3',
    ]);
    expect(results(await router.send('eth-mainnet', ACCOUNT, [logs(100)]))).toEqual([
      'x'.repeat(98),
    ]);
  });

  it('a client batch: its answers together stay within the limit; the calls past it are -32005 each', async () => {
    const { router, nodes, bodies } = setup(20, 1, undefined, undefined, undefined, LIMIT);
    nodes.get('eth-mainnet')![0]!.answer = sized;
    const answers = await router.send('eth-mainnet', ACCOUNT, [
      logs(400),
      logs(400),
      logs(400),
      logs(100),
    ]);
    // The batch's answer passed the read limit: each call alone, in turn, charged to the request.
    expect(answers.map((a) => (a.kind === 'result' ? a.resultText.length : limitError(a)))).toEqual(
      [400, 400, expect.objectContaining({ code: 'response_too_large' }), 100],
    );
    expect(shapes(bodies('eth-mainnet'))).toEqual([
      ['eth_getLogs', 'eth_getLogs', 'eth_getLogs', 'eth_getLogs'],
      'eth_getLogs',
      'eth_getLogs',
      'eth_getLogs',
      'eth_getLogs',
    ]);
    expect(answers.filter(isBilled)).toHaveLength(3);
  });

  it("a coalesced batch past the limit: each request's calls get their own answers", async () => {
    const { router, nodes } = setup(20, 1, undefined, undefined, undefined, LIMIT);
    nodes.get('eth-mainnet')![0]!.answer = sized;
    const [big, small] = await Promise.all([
      router.send('eth-mainnet', ACCOUNT, [call('eth_getBlockByNumber', '900')]),
      router.send('eth-mainnet', ACCOUNT, [call('eth_getBlockByNumber', '300')]),
    ]);
    expect(big!.map((a) => a.kind)).toEqual(['result']);
    expect(small!.map((a) => a.kind)).toEqual(['result']);
  });
});

describe("UpstreamRouter: the worker's budget of answer bytes in flight (ADR 0215 amendment)", () => {
  const MIB = 1024 * 1024;
  /** Answers each call with a result of `n` characters for params ['<n>']. */
  const sized = (body: unknown): string => {
    const answer = (c: { id: string; params: string[] }) =>
      `{"jsonrpc":"2.0","id":${JSON.stringify(c.id)},"result":"${'x'.repeat(Number(c.params[0]) - 2)}"}`;
    return Array.isArray(body) ? `[${body.map(answer).join(',')}]` : answer(body as never);
  };
  const logs = (size: number) => call('eth_getLogs', String(size));
  const sizes = (answers: CallAnswer[]) =>
    answers.map((a) =>
      a.kind === 'result'
        ? a.resultText.length
        : a.kind === 'gateway_error'
          ? {
              code: a.error.code,
              kind: a.error.kind,
              message: a.error.message,
              data: a.error.details?.['jsonRpcData'],
            }
          : a.kind,
    );
  const BUSY = {
    code: 'answers_busy',
    kind: 'too_large',
    message: 'limit exceeded: server busy: too many large answers in flight; retry shortly',
    data: { limit: 3 * MIB },
  };

  it('a big answer the budget cannot hold is -32005 "server busy", unbilled, no node failure; a small one meanwhile is answered; once the first is done a big one is answered', async () => {
    const inFlight = new AnswersInFlight(3 * MIB);
    const { router, nodes, pools, bodies, metrics } = setup(
      1,
      2,
      undefined,
      undefined,
      undefined,
      32 * MIB,
      inFlight,
    );
    for (const node of nodes.get('eth-mainnet')!) node.answer = sized;
    // A request whose 2 MiB answer is held until its answer is written.
    const first = new AnswerBudget(32 * MIB, inFlight);
    expect(sizes(await router.send('eth-mainnet', ACCOUNT, [logs(2 * MIB)], first))).toEqual([
      2 * MIB,
    ]);
    expect(inFlight.bytes).toBe(2 * MIB);
    // Another big answer would take the worker past its budget: refused, under the call.
    const second = new AnswerBudget(32 * MIB, inFlight);
    const refused = await router.send('eth-mainnet', ACCOUNT, [logs(2 * MIB)], second);
    expect(sizes(refused)).toEqual([BUSY]);
    expect(isBilled(refused[0]!)).toBe(false);
    second.release();
    // One node asked (another would be as busy), no breaker count, node healthy.
    expect(bodies('eth-mainnet', 0).length + bodies('eth-mainnet', 1).length).toBe(2);
    for (const u of pools.get('eth-mainnet')!.upstreams) {
      expect(u.breaker.stateAt(0)).toBe('closed');
      expect(u.healthy).toBe(true);
    }
    expect((await outcomes(metrics)).filter((o) => o.includes(' busy '))).toHaveLength(1);
    expect((await metrics.answersRefused.get()).values[0]!.value).toBe(1);
    expect((await metrics.answerBytesInFlight.get()).values[0]!.value).toBe(2 * MIB);
    // A small answer (up to 1 MiB) is never refused by big ones.
    expect(sizes(await router.send('eth-mainnet', ACCOUNT, [logs(MIB - 100)]))).toEqual([
      MIB - 100,
    ]);
    // The first request is done: its bytes are given back, and a big answer is read again.
    first.release();
    expect(inFlight.bytes).toBe(0);
    expect(sizes(await router.send('eth-mainnet', ACCOUNT, [logs(2 * MIB)]))).toEqual([2 * MIB]);
    expect(inFlight.bytes).toBe(0);
    expect((await metrics.answerBytesInFlight.get()).values[0]!.value).toBe(0);
  });

  it('a batch whose body the budget cannot hold: each of its calls is -32005 "server busy"', async () => {
    const inFlight = new AnswersInFlight(3 * MIB);
    const { router, nodes } = setup(20, 1, undefined, undefined, undefined, 32 * MIB, inFlight);
    nodes.get('eth-mainnet')![0]!.answer = sized;
    const answers = await router.send('eth-mainnet', ACCOUNT, [logs(2 * MIB), logs(2 * MIB)]);
    expect(sizes(answers)).toEqual([BUSY, BUSY]);
    expect(inFlight.bytes).toBe(0);
  });

  it.each(['ambiguous', 'not_sent', 'bad_answer', 'too_large', 'busy'] as const)(
    'what a read held is given back when it ends in %s',
    async (failure) => {
      const inFlight = new AnswersInFlight(3 * MIB);
      const { router, nodes } = setup(1, 2, undefined, undefined, undefined, 32 * MIB, inFlight);
      for (const node of nodes.get('eth-mainnet')!)
        node.post = async (_body, _timeoutMs, _maxBytes, read) => {
          // Part of the body arrived (and was held), then the read ended.
          read?.grow(2 * MIB);
          return { ok: false, failure, reason: failure };
        };
      const budget = new AnswerBudget(32 * MIB, inFlight);
      const [answer] = await router.send('eth-mainnet', ACCOUNT, [logs(10)], budget);
      expect(answer!.kind).toBe('gateway_error');
      expect(inFlight.bytes).toBe(0);
    },
  );

  it('a read that throws gives back what it held too', async () => {
    const inFlight = new AnswersInFlight(3 * MIB);
    const { router, nodes } = setup(1, 1, undefined, undefined, undefined, 32 * MIB, inFlight);
    nodes.get('eth-mainnet')![0]!.post = async (_body, _timeoutMs, _maxBytes, read) => {
      read?.grow(2 * MIB);
      throw new Error('boom');
    };
    await expect(router.send('eth-mainnet', ACCOUNT, [logs(10)])).rejects.toThrow('boom');
    expect(inFlight.bytes).toBe(0);
  });
});

describe('UpstreamRouter: the head never goes backwards (ADR 0202 amendment, "Heights")', () => {
  /** Node 0 is at 0x7c (124); node 1 says 0x79 (121) in its answers, though its check said 124. */
  function lagging() {
    const env = setup(1, 2);
    const pool = env.pools.get('eth-mainnet')!;
    for (const u of pool.upstreams) u.height = 124;
    const block = (n: number) => ({
      number: `0x${n.toString(16)}`,
      hash: `0x${n}`,
      transactions: [],
    });
    const [a, b] = env.nodes.get('eth-mainnet')!;
    const node = (height: number) =>
      answerEach((c) => {
        if (c.method === 'eth_blockNumber') return { result: `0x${height.toString(16)}` };
        const n = c.params[0] === 'latest' ? height : Number.parseInt(String(c.params[0]), 16);
        return { result: n > height ? null : block(n) };
      });
    a!.answer = node(124);
    b!.answer = node(121);
    return { ...env, pool };
  }

  it('eth_blockNumber from a node behind is raised to the pool head; a lagging node only when the best cannot', async () => {
    const { router, bodies } = lagging();
    const seen: number[] = [];
    for (let i = 0; i < 40; i++) {
      const [answer] = await router.send('eth-mainnet', ACCOUNT, [call('eth_blockNumber')]);
      seen.push(Number.parseInt(JSON.parse((answer as { resultText: string }).resultText), 16));
    }
    expect(new Set(seen)).toEqual(new Set([124]));
    // Node 1 answered 121 once (round-robin among equals): from then on it is behind, not asked.
    expect(bodies('eth-mainnet', 1).length).toBeLessThanOrEqual(1);
  });

  it("'latest' from a node behind is asked of another; a block number at or below the head that one node lacks is another's", async () => {
    const { router, bodies } = lagging();
    for (let i = 0; i < 10; i++) {
      const [latest] = await router.send('eth-mainnet', ACCOUNT, [
        call('eth_getBlockByNumber', 'latest'),
      ]);
      expect(JSON.parse((latest as { resultText: string }).resultText).number).toBe('0x7c');
      const [byNumber] = await router.send('eth-mainnet', ACCOUNT, [
        call('eth_getBlockByNumber', '0x7c'),
      ]);
      expect(JSON.parse((byNumber as { resultText: string }).resultText)).toMatchObject({
        number: '0x7c',
      });
    }
    expect(bodies('eth-mainnet', 1).length).toBeGreaterThan(0);
    // Beyond the head, null is the answer (no node has it): relayed after every node said so.
    const [future] = await router.send('eth-mainnet', ACCOUNT, [
      call('eth_getBlockByNumber', '0x7d'),
    ]);
    expect(future).toEqual({ kind: 'result', resultText: 'null' });
  });
});

/**
 * QA (Low): a GetBlockInfoInBatch of 100 blocks cancelled by its client 5-34 ms in went on to a
 * node whole, and was billed 100 calls. A request that may be abandoned (`abandoned`, a gRPC
 * call) is sent in slices, two at a time; once abandoned, the slices not yet sent are not.
 */
describe('UpstreamRouter: the calls of an abandoned request not yet sent are not sent', () => {
  const blockCalls = (n: number) =>
    Array.from({ length: n }, (_, i) => call('eth_getBlockByNumber', `0x${(i + 1).toString(16)}`));
  const sizes = (bodies: unknown[]) => bodies.map((b) => (b as unknown[]).length);

  it('abandoned once its first slices are sent: those are answered, the rest CALL_ABANDONED, unbilled', async () => {
    const { router, nodes, bodies } = setup(20);
    const controller = new AbortController();
    // The client cancels while the node works on the first slice.
    nodes.get('polygon-mainnet')![0]!.answer = () => void controller.abort();
    const answers = await router.send(
      'polygon-mainnet',
      ACCOUNT,
      blockCalls(100),
      undefined,
      controller.signal,
    );
    expect(sizes(bodies('polygon-mainnet'))).toEqual([ABANDONABLE_SLICE]);
    expect(answers).toHaveLength(100);
    expect(answers.slice(0, ABANDONABLE_SLICE).every((a) => a.kind === 'result')).toBe(true);
    for (const answer of answers.slice(ABANDONABLE_SLICE)) {
      expect(answer).toEqual({ kind: 'gateway_error', error: CALL_ABANDONED });
      expect(isBilled(answer)).toBe(false);
    }
  });

  it('a cancel read off the connection while a fast node answers stops the slices after it', async () => {
    // QA (Medium): anvil answered each slice within a millisecond; the next slice followed its
    // answer in the same run of callbacks, so the cancel, read from the client's connection (I/O:
    // here an immediate queued when the first slice reached the node), came after all 100 calls.
    const { router, nodes, bodies } = setup(20);
    const controller = new AbortController();
    let queued = false;
    const node = nodes.get('polygon-mainnet')![0]!;
    const answerOf = node.answer;
    node.answer = (body) => {
      if (!queued) setImmediate(() => controller.abort());
      queued = true;
      return answerOf?.(body);
    };
    const answers = await router.send(
      'polygon-mainnet',
      ACCOUNT,
      blockCalls(100),
      undefined,
      controller.signal,
    );
    // The slices in flight when it came (both lanes' first), and none after.
    const sent = sizes(bodies('polygon-mainnet')).reduce((sum, n) => sum + n, 0);
    expect(sent).toBe(SLICES_IN_FLIGHT * ABANDONABLE_SLICE);
    expect(answers.filter((a) => a.kind === 'result')).toHaveLength(sent);
    expect(answers.slice(sent).every((a) => !isBilled(a))).toBe(true);
  });

  it('abandoned before it is sent: nothing reaches a node', async () => {
    const { router, bodies } = setup(20);
    const answers = await router.send(
      'polygon-mainnet',
      ACCOUNT,
      blockCalls(3),
      undefined,
      AbortSignal.abort(),
    );
    expect(bodies('polygon-mainnet')).toEqual([]);
    expect(answers.map((a) => a.kind)).toEqual(Array(3).fill('gateway_error'));
  });

  it('not abandoned: every call answered in order, in slices of 20, two in flight', async () => {
    const { router, bodies } = setup(20);
    const answers = await router.send(
      'polygon-mainnet',
      ACCOUNT,
      blockCalls(100),
      undefined,
      new AbortController().signal,
    );
    expect(results(answers)).toEqual(
      blockCalls(100).map((c) => `eth_getBlockByNumber(${c.params[0]})`),
    );
    expect(sizes(bodies('polygon-mainnet'))).toEqual(Array(5).fill(ABANDONABLE_SLICE));
    expect(SLICES_IN_FLIGHT).toBe(2);
  });

  it('without a signal (HTTP, WebSocket), a request of 100 calls still goes whole, as before', async () => {
    const { router, bodies } = setup(20);
    await router.send('polygon-mainnet', ACCOUNT, blockCalls(100));
    expect(sizes(bodies('polygon-mainnet'))).toEqual([100]);
  });
});

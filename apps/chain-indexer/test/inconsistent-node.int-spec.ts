import { startAnvil, type AnvilInstance } from '@meridian/testing';
import { startForwardingUpstream } from './forwarding-upstream';
import {
  canonicalFrom,
  ChainStream,
  createWorld,
  nodeHashes,
  rpc,
  startIndexer,
  waitUntil,
  type IndexerProcess,
  type World,
} from './indexer-harness';

interface Call {
  id: unknown;
  method: string;
  params?: unknown[];
}

const INCONSISTENT =
  'node answers inconsistently: its block after the cursor does not extend its block at the cursor';
const FORKED_PARENT = `0x${'de'.repeat(32)}`;

/**
 * A FAKE upstream for an inconsistent node (or a load-balanced pool answering from two forks):
 * it forwards every call to anvil, but once armed answers the block at `height` with another
 * `parentHash` while its block below still is anvil's. anvil cannot answer so on its own.
 */
async function startInconsistentUpstream(target: string) {
  let height: number | undefined;
  const upstream = await startForwardingUpstream(target, async (text, forward) => {
    const call = JSON.parse(text) as Call | Call[];
    if (height === undefined || Array.isArray(call) || call.method !== 'eth_getBlockByNumber')
      return undefined;
    const tag = (call.params as [string, boolean])[0];
    if (!tag.startsWith('0x') || Number(tag) !== height) return undefined;
    const answer = JSON.parse(await forward(text)) as { result: { parentHash: string } | null };
    if (answer.result) answer.result.parentHash = FORKED_PARENT;
    return JSON.stringify(answer);
  });
  return { ...upstream, arm: (at: number) => (height = at) };
}

/**
 * QA MM F3: the node's block N+1 names a parent other than its block N, which is our cursor.
 * The ancestor search found the cursor, nothing to remove, and the step returned as an idle
 * success for ever: no log, lag 0 (clamped), the stall alert's timestamp moving on.
 */
describe('chain-indexer, a node whose next block does not extend its own block at the cursor', () => {
  let anvil: AnvilInstance;
  let world: World;
  let stream: ChainStream;
  let fake: Awaited<ReturnType<typeof startInconsistentUpstream>>;
  const processes: IndexerProcess[] = [];
  const headNumber = async () => Number(await rpc<string>(anvil.url, 'eth_blockNumber'));
  const metrics = async (indexer: IndexerProcess) =>
    (await fetch(`http://127.0.0.1:${indexer.port}/metrics`)).text();
  const metric = (text: string, name: string, label = '') =>
    Number(new RegExp(`^${name}\\{[^}]*${label}[^}]*\\} (\\S+)$`, 'm').exec(text)?.[1]);
  const lastPublished = async () =>
    (await stream.all()).filter((m) => m.kind === 'block').slice(-1)[0]?.body.number;

  beforeEach(async () => {
    anvil = await startAnvil({ chainId: 1 });
    world = await createWorld();
    stream = await ChainStream.open(world);
    fake = await startInconsistentUpstream(anvil.url);
  }, 60_000);

  afterEach(async () => {
    await Promise.all(processes.splice(0).map((p) => p.kill('SIGKILL')));
    await fake?.close();
    await stream?.close();
    await anvil?.stop();
    await world?.cleanup();
  });

  const startOn = async (upstreams: string[]) => {
    await rpc(anvil.url, 'anvil_mine', ['0x3']);
    const indexer = await startIndexer(world, {
      NETWORKS: 'eth-mainnet',
      UPSTREAMS: JSON.stringify({ 'eth-mainnet': upstreams }),
      START_BLOCKS_BEHIND: '2',
    });
    processes.push(indexer);
    const head = await headNumber();
    await waitUntil(async () => (await lastPublished()) === head, 20_000, 'caught up');
    fake.arm(head + 1);
    await rpc(anvil.url, 'anvil_mine', ['0x3']);
    return { indexer, cursor: head };
  };

  it('one node: a failed step with a warning naming heights and hashes, lag = head − cursor, no success mark', async () => {
    const { indexer, cursor } = await startOn([fake.url]);
    const failures = () => indexer.lines.filter((l) => l.msg === INCONSISTENT);
    await waitUntil(() => failures().length >= 1, 20_000, 'the inconsistency warning');
    const first = failures()[0]!;
    const [ours] = (await nodeHashes(anvil.url, [cursor])).values();
    expect(first).toMatchObject({
      level: 40,
      cursor: { number: cursor, hash: ours },
      next: { number: cursor + 1, parentHash: FORKED_PARENT },
      nodeHead: cursor + 3,
    });
    const before = await metrics(indexer);
    const stalledAt = metric(before, 'chain_indexer_last_step_success_timestamp_seconds');
    await waitUntil(() => failures().length >= 3, 20_000, 'two more failed steps');
    const after = await metrics(indexer);
    expect(metric(after, 'chain_indexer_last_step_success_timestamp_seconds')).toBe(stalledAt);
    expect(metric(after, 'chain_indexer_head_lag_blocks')).toBe(3);
    expect(metric(after, 'chain_indexer_cursor')).toBe(cursor);
    expect(
      metric(after, 'chain_indexer_errors_total', 'code="node_inconsistent"'),
    ).toBeGreaterThanOrEqual(3);
    expect(await lastPublished()).toBe(cursor);
  }, 90_000);

  it('two nodes: the next step asks the other node, and publishing goes on', async () => {
    const { indexer, cursor } = await startOn([fake.url, anvil.url]);
    await waitUntil(
      async () => (await lastPublished()) === cursor + 3,
      20_000,
      'the blocks after the cursor, from the second node',
    );
    const warned = indexer.lines.filter((l) => l.msg === INCONSISTENT);
    expect(warned).toHaveLength(1);
    expect(warned[0]!['nextUpstream']).toBe(new URL(anvil.url).origin);
    const messages = await stream.all();
    const chain = canonicalFrom(messages);
    expect(chain).toEqual(await nodeHashes(anvil.url, chain.keys()));
    expect(messages.some((m) => m.kind === 'removed')).toBe(false);
  }, 90_000);
});

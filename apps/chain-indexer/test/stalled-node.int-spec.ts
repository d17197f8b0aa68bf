import { startAnvil, type AnvilInstance } from '@meridian/testing';
import { startForwardingUpstream } from './forwarding-upstream';
import {
  ChainStream,
  createWorld,
  rpc,
  startIndexer,
  waitUntil,
  type IndexerProcess,
  type World,
} from './indexer-harness';

/**
 * QA round E, D3: a node that is down left no trace but `chain_indexer_errors_total` (the lag
 * gauges are only set by a step that worked, /readyz stays 200). The leader's
 * `chain_indexer_last_step_success_timestamp_seconds` moves with every step that worked and
 * stays put while every step fails; MeridianChainIndexerStalled reads `time() -` it
 * (deploy/monitoring/alerts.test.yaml has the rule's own tests).
 */
describe('chain-indexer: a node that fails every step', () => {
  let anvil: AnvilInstance;
  let world: World;
  let stream: ChainStream;
  let indexer: IndexerProcess | undefined;
  let node: { url: string; close(): Promise<void> } | undefined;
  let down = false;

  const series = async (name: string): Promise<number[]> => {
    const text = await (await fetch(`http://127.0.0.1:${indexer!.port}/metrics`)).text();
    return [
      ...text.matchAll(new RegExp(`^${name}\\{[^}]*network="eth-mainnet"[^}]*\\} (\\S+)$`, 'gm')),
    ].map((m) => Number(m[1]));
  };
  const gauge = async (name: string) => (await series(name))[0];
  const errors = async () =>
    (await series('chain_indexer_errors_total')).reduce((a, b) => a + b, 0);
  const LAST = 'chain_indexer_last_step_success_timestamp_seconds';

  beforeAll(async () => {
    anvil = await startAnvil({ chainId: 1 });
    world = await createWorld();
    stream = await ChainStream.open(world);
    // The node as the indexer sees it: anvil, or (down) a 502 for every call.
    node = await startForwardingUpstream(anvil.url, async () => {
      if (down) throw new Error('node down');
      return undefined;
    });
  }, 60_000);

  afterAll(async () => {
    await indexer?.kill('SIGKILL');
    await node?.close();
    await stream?.close();
    await anvil?.stop();
    await world?.cleanup();
  });

  it('moves the last-success gauge on every step that works, never on one that fails', async () => {
    indexer = await startIndexer(world, {
      NETWORKS: 'eth-mainnet',
      // No socket (nothing answers one there): the follower polls every POLL_INTERVAL_MS.
      UPSTREAMS: JSON.stringify({ 'eth-mainnet': [{ http: node!.url, ws: 'ws://127.0.0.1:1' }] }),
    });
    const head = Number(await rpc<string>(anvil.url, 'eth_blockNumber'));
    await waitUntil(
      async () => (await stream.all()).some((m) => m.kind === 'block' && m.body.number === head),
      20_000,
      'first block',
    );
    expect(await gauge('chain_indexer_leader')).toBe(1);

    // Healthy: idle steps at the head work, and each one moves the gauge.
    const healthy = (await gauge(LAST))!;
    expect(healthy).toBeGreaterThan(Date.now() / 1000 - 60);
    await waitUntil(
      async () => (await gauge(LAST))! > healthy,
      10_000,
      'gauge moves while healthy',
    );

    // Down: once a step has failed, every step fails; the gauge stays where it was.
    const before = await errors();
    down = true;
    await waitUntil(async () => (await errors()) >= before + 1, 10_000, 'a failed step');
    const frozen = (await gauge(LAST))!;
    const failed = await errors();
    await waitUntil(async () => (await errors()) >= failed + 3, 10_000, 'three more failed steps');
    expect(await gauge(LAST)).toBe(frozen);
    expect(await gauge('chain_indexer_leader')).toBe(1); // still the lease holder: the alert reads it
    expect(
      indexer.lines.some(
        (l) => l.msg === 'indexer step failed; retrying' && l.network === 'eth-mainnet',
      ),
    ).toBe(true);

    // Back: the next step that works moves it again.
    down = false;
    await waitUntil(
      async () => (await gauge(LAST))! > frozen,
      10_000,
      'gauge moves once the node is back',
    );
  }, 120_000);
});

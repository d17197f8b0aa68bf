import { AggregatorRegistry } from 'prom-client';
import { buildInfo } from './build-info';
import { createMetricsRegistry } from './metrics';

describe('createMetricsRegistry', () => {
  it("counts the time the event loop spent running callbacks, growing with the thread's work", async () => {
    const registry = createMetricsRegistry('test');
    const busySeconds = async () =>
      (await registry.getSingleMetric('nodejs_eventloop_busy_seconds_total')!.get()).values[0]!
        .value;
    const before = await busySeconds();
    // 30 ms of work on the loop's own thread (not a wait: the loop is busy all along).
    const until = performance.now() + 30;
    while (performance.now() < until);
    expect((await busySeconds()) - before).toBeGreaterThanOrEqual(0.03);
    expect(await registry.metrics()).toContain(
      'nodejs_eventloop_busy_seconds_total{service="test"}',
    );
  });
});

describe('meridian_build_info', () => {
  const build = { version: '1.2.3', commit: '0123abc' };

  it("is 1, labelled with the app, the release and the commit, like Prometheus' *_build_info", async () => {
    const text = await createMetricsRegistry('billing-ledger', build).metrics();
    expect(text).toContain('# TYPE meridian_build_info gauge');
    expect(text).toContain(
      'meridian_build_info{app="billing-ledger",version="1.2.3",commit="0123abc",service="billing-ledger"} 1',
    );
  });

  it("stays 1 in a replica's aggregate of its processes' registries (rpc-gateway's workers)", async () => {
    const parts = await Promise.all(
      [1, 2, 3].map(() => createMetricsRegistry('rpc-gateway', build).getMetricsAsJSON()),
    );
    const text = await AggregatorRegistry.aggregate(parts).metrics();
    expect(text).toMatch(/^meridian_build_info\{[^}]*commit="0123abc"[^}]*\} 1$/m);
  });

  it('defaults to this process: the root package.json version, commit from MERIDIAN_COMMIT', async () => {
    const { version, commit } = buildInfo();
    expect(await createMetricsRegistry('test').metrics()).toContain(
      `meridian_build_info{app="test",version="${version}",commit="${commit}",service="test"} 1`,
    );
  });
});

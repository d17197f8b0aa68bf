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

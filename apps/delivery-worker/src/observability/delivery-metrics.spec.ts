import { Registry } from 'prom-client';
import { DeliveryMetrics } from './delivery-metrics';

async function busySeconds(registry: Registry): Promise<number> {
  const metric = await registry.getSingleMetric('delivery_event_loop_busy_seconds_total')!.get();
  return metric.values[0]!.value;
}

describe('DeliveryMetrics', () => {
  it('counts the time the event loop spent running callbacks, growing with work done', async () => {
    const registry = new Registry();
    new DeliveryMetrics(registry, { queueDepth: async () => 0, oldestWaitingMs: () => 0 });
    const before = await busySeconds(registry);
    // 30 ms of work on the loop's own thread (not a wait: the loop is busy all along).
    const until = performance.now() + 30;
    while (performance.now() < until);
    const after = await busySeconds(registry);
    expect(after - before).toBeGreaterThanOrEqual(0.03);
    expect(await registry.metrics()).toContain('delivery_event_loop_busy_seconds_total ');
  });
});

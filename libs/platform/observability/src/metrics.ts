import { performance } from 'node:perf_hooks';
import { Counter, Registry, collectDefaultMetrics } from 'prom-client';

/** One registry per process; every metric of an app registers here and is served on /metrics. */
export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  new Counter({
    name: 'nodejs_eventloop_busy_seconds_total',
    help: 'Time the event loop spent running callbacks (its rate is the utilisation: near 1, the thread is the bound, not what it waits for)',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(performance.eventLoopUtilization().active / 1_000);
    },
  });
  return registry;
}

/** Optional: what /metrics serves instead of this process's registry (e.g. a replica's aggregate). */
export const METRICS_TEXT = Symbol('METRICS_TEXT');
export type MetricsText = () => Promise<string>;

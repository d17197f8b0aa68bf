import { performance } from 'node:perf_hooks';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { buildInfo, type BuildInfo } from './build-info';

/** One registry per process; every metric of an app registers here and is served on /metrics. */
export function createMetricsRegistry(service: string, build: BuildInfo = buildInfo()): Registry {
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
  // Prometheus' own `*_build_info` shape: always 1, the facts in labels, so a query can join any
  // series to the release a pod runs (`* on(instance) group_left(version) meridian_build_info`).
  // `max`, not the default `sum`, where rpc-gateway aggregates its workers' registries.
  new Gauge({
    name: 'meridian_build_info',
    help: 'The release (root package.json version) and commit (MERIDIAN_COMMIT) this process runs; always 1',
    labelNames: ['app', 'version', 'commit'] as const,
    registers: [registry],
    aggregator: 'max',
  }).set({ app: service, version: build.version, commit: build.commit }, 1);
  return registry;
}

/** Optional: what /metrics serves instead of this process's registry (e.g. a replica's aggregate). */
export const METRICS_TEXT = Symbol('METRICS_TEXT');
export type MetricsText = () => Promise<string>;

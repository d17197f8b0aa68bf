import { Registry, collectDefaultMetrics } from 'prom-client';

/** One registry per process; every metric of an app registers here and is served on /metrics. */
export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** Optional: what /metrics serves instead of this process's registry (e.g. a replica's aggregate). */
export const METRICS_TEXT = Symbol('METRICS_TEXT');
export type MetricsText = () => Promise<string>;

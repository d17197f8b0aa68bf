import { Registry, collectDefaultMetrics } from 'prom-client';

/** One registry per process; every metric of an app registers here and is served on /metrics. */
export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  return registry;
}

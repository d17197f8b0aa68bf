import 'reflect-metadata';
import cluster from 'node:cluster';
import { loadConfigOrExit } from '@meridian/platform-config';
import { exitIfAddressInUse } from '@meridian/platform-http';
import {
  buildInfo,
  createLogger,
  disableRequestContext,
  installProcessGuard,
} from '@meridian/platform-observability';
import { SERVICE } from './app.module';
import { configSchema } from './config/config';
import { createGatewayApp } from './gateway-app';
import { ReplicaLink } from './replica/replica-link';
import { runReplicaPrimary } from './replica/replica-primary';
import { applyGcPolicy } from './runtime/gc-policy';
import { armShutdownDeadline, SHUTDOWN_DEADLINE_MS } from './runtime/shutdown-deadline';
import { offeredUpstreams } from './upstreams/pools-from-config';
import { NO_NETWORK_SERVED } from './upstreams/serving-readiness';

async function main(): Promise<void> {
  // No AsyncLocalStorage in any gateway process, the primary's and workers' fastify routes
  // included: it would put promise hooks on every relayed call (ADR 0210).
  disableRequestContext();
  const config = loadConfigOrExit(configSchema);
  applyGcPolicy(config.HEAP_GROWING_PERCENT);
  const base = createLogger(SERVICE, config.LOG_LEVEL);
  // Once per replica (not per worker): an endpoint with no node for any network it offers
  // starts, but says so here and stays not ready (/readyz names it too).
  if (cluster.isPrimary && !offeredUpstreams(config).some(([, nodes]) => nodes.length > 0))
    base.warn({ endpoint: config.REGION }, `${NO_NETWORK_SERVED}; not ready until one is set`);
  if (cluster.isPrimary && config.GATEWAY_WORKERS > 1) {
    // Asked once, here: a worker finding its port taken exits with the one line, and the primary
    // would replace it for ever.
    await exitIfAddressInUse(base, 'HTTP_PORT', config.HTTP_PORT, config.HTTP_HOST);
    if (config.GRPC_ENABLED)
      await exitIfAddressInUse(base, 'GRPC_PORT', config.GRPC_PORT, config.HTTP_HOST);
    runReplicaPrimary(config, base, config.GATEWAY_WORKERS);
    installProcessGuard(base);
    return;
  }
  // Every line of a worker says which process of the replica wrote it.
  const logger = cluster.isWorker ? base.child({ worker: cluster.worker?.id }) : base;
  const replica = cluster.isWorker ? new ReplicaLink(process) : undefined;
  const gateway = await createGatewayApp(config, logger, { replica });
  // A worker whose primary is gone stops too (flushing its usage): the replica is going down.
  // node:cluster itself exits a worker at once on an unexpected disconnect, before this handler
  // runs, which lost the worker's unflushed usage (found by the fault suite, ADR 0504): marked
  // as expected, the worker stops as on SIGTERM.
  if (replica && cluster.worker) {
    cluster.worker.exitedAfterDisconnect = true;
    process.once('disconnect', () => void gateway.app.close().finally(() => process.exit(1)));
  }
  await gateway.app.listen(config.HTTP_PORT, config.HTTP_HOST);
  logger.info(
    {
      port: config.HTTP_PORT,
      region: config.REGION,
      pid: process.pid,
      version: buildInfo().version,
      commit: buildInfo().commit,
    },
    'rpc-gateway listening',
  );
  // From here on no request ends the process (a worker that dies anyway is replaced by its
  // primary); a failed start above still exits.
  installProcessGuard(logger);
  // A stop held by load still ends within the documented bound (ADR 0203 amendment).
  armShutdownDeadline(process, () =>
    logger.error({ deadline_ms: SHUTDOWN_DEADLINE_MS }, 'graceful stop overran: exiting'),
  );
}

void main();

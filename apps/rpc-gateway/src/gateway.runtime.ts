import { hostname } from 'node:os';
import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  OnApplicationBootstrap,
  OnApplicationShutdown,
  OnModuleInit,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Server } from 'node:http';
import {
  JetStreamConsumers,
  JetStreamPublisher,
  NatsProbe,
  type UsageFlusher,
} from '@meridian/platform-messaging';
import { LOGGER, ReadinessRegistry } from '@meridian/platform-observability';
import { Registry } from 'prom-client';
import type { Logger } from 'pino';
import { APP_CONFIG } from './config/app-config.token';
import type { AppConfig } from './config/config';
import { LruCache } from './cache/lru-cache';
import { AnswersInFlight } from './upstreams/answer-budget';
import {
  AccountStates,
  CredentialCache,
  CREDENTIAL_SOURCE,
  type CredentialSource,
} from './credentials/credential-cache';
import { CredentialService } from './credentials/credential.service';
import { DEFAULT_SPEND_LEASE, UsageWindow } from './credentials/spend-estimate';
import { fleetSpendPool, meteredSpendPool } from './credentials/spend-pool';
import { startBillingFeeds } from './credentials/billing-feeds';
import { createPlanLimiter, type PlanLimiter } from './limits/plan-limiter';
import type { ReplicaLink } from './replica/replica-link';
import { RemoteSubscriptions } from './websocket/remote-subscriptions';
import { UsageMeter } from './metering/usage-meter';
import { gatewayUsageFlusher } from './metering/usage-publisher';
import { GatewayMetrics } from './observability/gateway-metrics';
import { attachHotPath } from './relay/relay.route';
import { RequestLog } from './observability/request-log';
import { RelayService } from './relay/relay.service';
import { HealthChecker } from './upstreams/health-checker';
import { notServingReason } from './upstreams/serving-readiness';
import type { NetworkKey } from '@meridian/networks';
import type { UpstreamPool } from './upstreams/upstream-pool';
import { poolsFromConfig } from './upstreams/pools-from-config';
import { UpstreamRouter } from './upstreams/upstream-router';
import { FilterIdSeal, randomFilterIdKey } from './upstreams/filter-id';
import { hubLiveness, SubscriptionHub, type Subscriptions } from './websocket/subscription-hub';
import { WsGateway } from './websocket/ws-gateway';
import type { RunningGrpcServer } from '@meridian/platform-grpc';
import { startBorGrpc } from './bor-grpc/bor-grpc.server';
import { BorApiService } from './bor-grpc/bor-api.service';

/** The HTTP edge's body limit (createHttpApp default; COMPAT: about 5 MiB). */
const BODY_LIMIT_BYTES = 5 * 1024 * 1024;
/** How long stopping waits for calls in flight before it cuts the connections still open. */
const HTTP_DRAIN_MS = 10_000;
/** The worker's line to its replica primary, or null when this process is the whole replica. */
export const REPLICA_LINK = Symbol('REPLICA_LINK');

/**
 * Wires the gateway's parts and owns their lifecycle: raw fastify routes and the WebSocket
 * upgrade on the Nest HTTP server, health checks, billing feeds, the usage flusher and the
 * BorApi gRPC server. Shutdown flushes metered usage before NATS closes.
 */
@Injectable()
export class GatewayRuntime
  implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown
{
  readonly metrics: GatewayMetrics;
  readonly pools: Map<NetworkKey, UpstreamPool>;
  readonly credentials: CredentialService;
  readonly relay: RelayService;
  readonly hub: Subscriptions;
  readonly meter = new UsageMeter();
  private readonly health: HealthChecker;
  private readonly flusher: UsageFlusher;
  /** Set when shutdown begins: the hot path answers with `Connection: close` from then on. */
  private closing = false;
  private readonly planLimiter: PlanLimiter;
  private readonly ws: WsGateway;
  private readonly requestLog: RequestLog;
  private feeds: { stop(): Promise<unknown> } | undefined;
  private grpc: RunningGrpcServer | undefined;
  grpcPort: number | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(CREDENTIAL_SOURCE) source: CredentialSource,
    private readonly registry: Registry,
    private readonly readiness: ReadinessRegistry,
    private readonly adapterHost: HttpAdapterHost,
    private readonly consumers: JetStreamConsumers,
    publisher: JetStreamPublisher,
    @Inject(REPLICA_LINK) replica: ReplicaLink | null,
    private readonly natsProbe: NatsProbe,
  ) {
    this.metrics = new GatewayMetrics(registry);
    this.pools = poolsFromConfig(config, (networks) =>
      logger.warn(
        { networks, endpoint: config.REGION },
        'upstreams configured for networks this endpoint does not offer: ignored',
      ),
    );
    // One budget of answer bytes in flight per worker process (ADR 0215 amendment).
    const answersInFlight = new AnswersInFlight(config.MAX_ANSWER_BYTES_IN_FLIGHT);
    const router = new UpstreamRouter(this.pools, this.metrics, {
      timeoutMs: config.UPSTREAM_TIMEOUT_MS,
      maxAttempts: config.UPSTREAM_MAX_ATTEMPTS,
      batchMax: config.UPSTREAM_BATCH_MAX,
      maxResponseBytes: config.MAX_RESPONSE_BYTES,
      answersInFlight,
      maxLogsBlockRange: config.MAX_LOGS_BLOCK_RANGE,
      filterIds: new FilterIdSeal(config.FILTER_ID_KEY ?? randomFilterIdKey(logger), config.REGION),
      logger,
    });
    this.health = new HealthChecker([...this.pools.values()], this.metrics, logger, {
      intervalMs: config.HEALTH_INTERVAL_MS,
      timeoutMs: config.HEALTH_TIMEOUT_MS,
    });
    const cache = new CredentialCache(Date.now, {
      positiveTtlMs: config.CREDENTIAL_TTL_MS,
      negativeTtlMs: config.CREDENTIAL_NEGATIVE_TTL_MS,
      staleIfErrorMs: config.CREDENTIAL_STALE_IF_ERROR_MS,
      maxEntries: 1_000_000,
    });
    // The spend estimates learn which usage is flushed from the flusher's drains (ADR 0201).
    const usageWindow = new UsageWindow();
    // Plan RPS: fleet-wide from the shared store (ADR 0102), else one bucket per replica (0204).
    this.planLimiter = createPlanLimiter(config, replica, registry, logger);
    // With that store, the spend estimates lease from one pool per balance state (ADR 0201).
    const spendPool =
      this.planLimiter.store && meteredSpendPool(fleetSpendPool(this.planLimiter.store), registry);
    this.credentials = new CredentialService(
      cache,
      new AccountStates(usageWindow, spendPool, {
        minChunkCu: DEFAULT_SPEND_LEASE.minChunkCu,
        maxChunkShare: DEFAULT_SPEND_LEASE.maxChunkShare,
        leaseMs: config.RATE_LIMIT_LEASE_MS,
      }),
      source,
      logger,
      () => this.metrics.credentialsKept.inc(),
    );
    this.relay = new RelayService(
      {
        endpoint: config.REGION,
        maxBatch: config.MAX_BATCH,
        maxLogsBlockRange: config.MAX_LOGS_BLOCK_RANGE,
        maxResponseBytes: config.MAX_RESPONSE_BYTES,
        answersInFlight,
      },
      this.credentials,
      router,
      new LruCache<string>(config.CACHE_MAX_ENTRIES),
      this.planLimiter.limiter,
      this.meter,
      this.metrics,
    );
    this.requestLog = new RequestLog(logger, config.REQUEST_LOGS, undefined, config.REGION);
    this.hub = replica
      ? new RemoteSubscriptions(replica, new Set(this.pools.keys()))
      : new SubscriptionHub(this.pools, this.metrics, logger, hubLiveness(config));
    replica?.provideMetrics(() => registry.getMetricsAsJSON());
    this.ws = new WsGateway(this.relay, this.hub, this.metrics, logger, {
      maxSubscriptionsPerConnection: config.WS_MAX_SUBSCRIPTIONS_PER_CONNECTION,
      maxSubscriptionsPerAccount: config.WS_MAX_SUBSCRIPTIONS_PER_ACCOUNT,
      maxBufferedBytes: config.WS_MAX_BUFFERED_BYTES,
      maxMessageBytes: config.WS_MAX_MESSAGE_BYTES,
      maxCallsInFlightPerConnection: config.WS_MAX_CALLS_IN_FLIGHT_PER_CONNECTION,
      maxConnectionsPerToken: config.WS_MAX_CONNECTIONS_PER_TOKEN,
      maxConnectionsPerAccount: config.WS_MAX_CONNECTIONS_PER_ACCOUNT,
      maxCallsInFlightPerAccount: config.WS_MAX_CALLS_IN_FLIGHT_PER_ACCOUNT,
      maxUnreadBytesPerAccount: config.WS_MAX_UNREAD_BYTES_PER_ACCOUNT,
      requestLog: this.requestLog,
    });
    const producerId = `${hostname()
      .replace(/[^A-Za-z0-9_-]/g, '-')
      .slice(0, 60)}-${process.pid}-${Date.now().toString(36)}`;
    this.flusher = gatewayUsageFlusher(
      this.meter,
      publisher,
      producerId,
      () => new Date(),
      this.metrics,
      logger,
      config.USAGE_FLUSH_MS,
      config.USAGE_FLUSH_VERSION,
      usageWindow,
    );
  }

  onModuleInit(): void {
    const server = this.adapterHost.httpAdapter.getHttpServer() as Server;
    attachHotPath(server, this.relay, this.metrics, this.requestLog, this.logger, {
      bodyLimitBytes: BODY_LIMIT_BYTES,
      closing: () => this.closing,
    });
    this.ws.attach(server);
    // Readiness is "can this process serve at all" (ADR 0212): not one network's nodes, not NATS.
    this.readiness.register('serving', async () => {
      const reason = notServingReason({
        listening: server.listening,
        closing: this.closing,
        networks: [...this.pools.values()].map((p) => ({
          network: p.network,
          upstreams: p.upstreams.length,
          healthy: p.upstreams.filter((u) => u.healthy).length,
        })),
      });
      if (reason) throw new Error(reason);
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    this.health.start();
    this.flusher.start();
    if (!this.config.STATIC_ACCESS_TOKENS)
      this.feeds = startBillingFeeds(this.consumers, this.credentials);
    if (this.config.GRPC_ENABLED) {
      this.grpc = await startBorGrpc(new BorApiService(this.relay, this.metrics), {
        host: this.config.HTTP_HOST,
        port: this.config.GRPC_PORT,
        tls: {
          certFile: this.config.PUBLIC_GRPC_TLS_CERT_FILE,
          keyFile: this.config.PUBLIC_GRPC_TLS_KEY_FILE,
          refreshIntervalMs: this.config.GRPC_TLS_REFRESH_SECONDS * 1_000,
        },
        logger: this.logger,
        requestLog: this.requestLog,
        registry: this.registry,
      });
      this.grpcPort = this.grpc.port;
      this.logger.info({ port: this.grpc.port }, 'BorApi gRPC listening');
    }
  }

  /** Runs every health check once now (tests; start-up). */
  healthCheckNow(): Promise<void> {
    return this.health.checkAll();
  }

  /** Probes NATS once now (tests). */
  natsCheckNow(): Promise<void> {
    return this.natsProbe.probe();
  }

  async beforeApplicationShutdown(): Promise<void> {
    // Abandons every connection's work and cuts the sockets after a second (ADR 0203 amendment).
    void this.ws.close();
    this.hub.close();
    await this.grpc?.close(2_000);
    // Every call is answered before the last usage flush (ADR 0103: a graceful stop loses
    // nothing). Nest closes the HTTP server only after this hook: calls answered on open
    // keep-alive connections meanwhile were metered into a window nobody flushed, and a client
    // that kept its connections busy held the shutdown off until SIGKILL (the fault suite, ADR 0504).
    await this.closeHttp();
    this.health.stop();
    await this.flusher.stop();
    await this.planLimiter.close();
    await this.feeds?.stop();
    this.requestLog.flush();
  }

  /**
   * Stops accepting connections, answers what is in flight with `Connection: close`, and waits
   * for the connections to end (those still open after HTTP_DRAIN_MS are cut).
   */
  private async closeHttp(): Promise<void> {
    this.closing = true;
    const server = this.adapterHost.httpAdapter.getHttpServer() as Server;
    if (!server.listening) return;
    // Any other answer finished from now on (a metrics scrape, a health probe on keep-alive)
    // advertises `Keep-Alive: timeout=0` and leaves its connection at most ~1 s idle (Node adds
    // 1 s to the timeout), instead of fastify's 72 s: `close` ends only idle connections of the
    // moment it is called, and an answer finishing after it leaves one more.
    server.keepAliveTimeout = 1;
    await new Promise<void>((resolve) => {
      const cut = setTimeout(() => {
        // Said, so an operator (and a test) can tell a stop the drain cut short from a clean one.
        this.logger.warn({ drainMs: HTTP_DRAIN_MS }, 'HTTP drain over: open connections cut');
        server.closeAllConnections();
        resolve();
      }, HTTP_DRAIN_MS);
      server.close(() => {
        clearTimeout(cut);
        resolve();
      });
      server.closeIdleConnections();
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.close()));
  }
}

import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** Every metric of the gateway, registered on the app's Registry (served on /metrics). */
export class GatewayMetrics {
  readonly calls: Counter<'network' | 'method' | 'status'>;
  readonly requests: Counter<'transport' | 'status'>;
  readonly requestDuration: Histogram<'transport'>;
  readonly upstreamRequests: Counter<'network' | 'upstream' | 'outcome'>;
  readonly upstreamDuration: Histogram<'network' | 'upstream'>;
  readonly upstreamBatchSize: Histogram<'network'>;
  readonly upstreamHealthy: Gauge<'network' | 'upstream'>;
  readonly upstreamHeight: Gauge<'network' | 'upstream'>;
  readonly upstreamBreakerOpen: Gauge<'network' | 'upstream'>;
  readonly cache: Counter<'network' | 'result'>;
  readonly usageCu: Counter<'network'>;
  readonly usagePublished: Counter<'outcome'>;
  readonly wsConnections: Gauge;
  readonly clientSubscriptions: Gauge<'network' | 'type'>;
  readonly upstreamSubscriptions: Gauge<'network' | 'type'>;
  readonly upstreamSubscribes: Counter<'network' | 'type'>;
  readonly subscriptionUpstream: Gauge<'network' | 'upstream'>;
  readonly subscriptionNotificationAge: Gauge<'network'>;
  readonly subscriptionUpstreamAbandoned: Counter<'network' | 'reason'>;
  readonly wsSlowClientsCut: Counter;
  readonly wsUnreadAnswerBytes: Gauge;
  readonly grpcCalls: Counter<'method' | 'code'>;
  readonly credentialsKept: Counter;
  readonly answerBytesInFlight: Gauge;
  readonly answersRefused: Counter;
  /** The worker's bytes of node answers in flight (ADR 0215 amendment), read at scrape. */
  private answerBytes: () => number = () => 0;

  /**
   * Label children resolved once per label combination: prom-client's `inc(labels)` validates
   * and hashes the label object on every call, which showed in the per-request profile.
   */
  private readonly children = new Map<
    string,
    { inc(value?: number): void; observe?(v: number): void }
  >();

  private child<T>(key: string, make: () => T): T {
    let found = this.children.get(key) as T | undefined;
    if (found === undefined) {
      found = make();
      this.children.set(key, found as never);
    }
    return found;
  }

  /** Per network, the age in seconds of its hub's last notification (undefined: no hub). */
  private readonly hubAges = new Map<string, () => number | undefined>();

  /** The subscription hub of `network` reports its last notification's age; undefined: gone. */
  watchSubscriptionHub(network: string, age: (() => number | undefined) | undefined): void {
    if (age === undefined) {
      this.hubAges.delete(network);
      this.subscriptionNotificationAge.remove({ network });
    } else this.hubAges.set(network, age);
  }

  /** The worker's budget of answers in flight reports its bytes (ADR 0215 amendment). */
  watchAnswersInFlight(bytes: () => number): void {
    this.answerBytes = bytes;
  }

  countAnswerRefused(): void {
    this.answersRefused.inc();
  }

  countCall(network: string, method: string, status: string): void {
    this.child(`c|${network}|${method}|${status}`, () =>
      this.calls.labels(network, method, status),
    ).inc();
  }

  countCu(network: string, cu: number): void {
    this.child(`u|${network}`, () => this.usageCu.labels(network)).inc(cu);
  }

  countCache(network: string, result: 'hit' | 'miss'): void {
    this.child(`k|${network}|${result}`, () => this.cache.labels(network, result)).inc();
  }

  countUpstream(network: string, upstream: string, outcome: string, seconds: number): void {
    this.child(`ur|${network}|${upstream}|${outcome}`, () =>
      this.upstreamRequests.labels(network, upstream, outcome),
    ).inc();
    this.child(`ud|${network}|${upstream}`, () =>
      this.upstreamDuration.labels(network, upstream),
    ).observe(seconds);
  }

  /** Calls in one exchange sent by the coalescing queue (ADR 0205); 1 = nothing to join. */
  observeUpstreamBatch(network: string, calls: number): void {
    this.child(`ub|${network}`, () => this.upstreamBatchSize.labels(network)).observe(calls);
  }

  constructor(registry: Registry) {
    const registers = [registry];
    this.calls = new Counter({
      name: 'rpc_gateway_calls_total',
      help: 'JSON-RPC calls by network, method and outcome (ok or error code)',
      labelNames: ['network', 'method', 'status'],
      registers,
    });
    this.requests = new Counter({
      name: 'rpc_gateway_requests_total',
      help: 'HTTP requests and WebSocket messages by answer status',
      labelNames: ['transport', 'status'],
      registers,
    });
    this.requestDuration = new Histogram({
      name: 'rpc_gateway_request_duration_seconds',
      help: 'Time from request to answer',
      labelNames: ['transport'],
      buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.upstreamRequests = new Counter({
      name: 'rpc_gateway_upstream_requests_total',
      help: 'Attempts at upstream nodes by outcome',
      labelNames: ['network', 'upstream', 'outcome'],
      registers,
    });
    this.upstreamDuration = new Histogram({
      name: 'rpc_gateway_upstream_duration_seconds',
      help: 'Upstream exchange time',
      labelNames: ['network', 'upstream'],
      buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.upstreamBatchSize = new Histogram({
      name: 'rpc_gateway_upstream_batch_size',
      help: 'Calls per upstream exchange of coalesced same-turn calls (count = such exchanges)',
      labelNames: ['network'],
      buckets: [1, 2, 5, 10, 20, 50, 100],
      registers,
    });
    this.upstreamHealthy = new Gauge({
      name: 'rpc_gateway_upstream_healthy',
      help: '1 when the upstream passed its last health check',
      labelNames: ['network', 'upstream'],
      // Every process of a replica checks its upstreams: the replica's view is the worst one.
      aggregator: 'min',
      registers,
    });
    this.upstreamHeight = new Gauge({
      name: 'rpc_gateway_upstream_block_height',
      help: 'Latest block height reported by the upstream',
      labelNames: ['network', 'upstream'],
      aggregator: 'max',
      registers,
    });
    this.upstreamBreakerOpen = new Gauge({
      name: 'rpc_gateway_upstream_breaker_open',
      help: '1 while the upstream breaker is open (no call is sent to it but a trial after its cooldown), 0 closed',
      labelNames: ['network', 'upstream'],
      // Every process keeps its own breakers: the replica shows a node open if any process has it open.
      aggregator: 'max',
      registers,
    });
    this.cache = new Counter({
      name: 'rpc_gateway_cache_total',
      help: 'Cacheable calls by hit or miss',
      labelNames: ['network', 'result'],
      registers,
    });
    this.usageCu = new Counter({
      name: 'rpc_gateway_usage_cu_total',
      help: 'CU metered',
      labelNames: ['network'],
      registers,
    });
    this.usagePublished = new Counter({
      name: 'rpc_gateway_usage_events_total',
      help: 'Usage events published',
      labelNames: ['outcome'],
      registers,
    });
    this.wsConnections = new Gauge({
      name: 'rpc_gateway_ws_connections',
      help: 'Open client WebSocket connections',
      registers,
    });
    this.clientSubscriptions = new Gauge({
      name: 'rpc_gateway_client_subscriptions',
      help: 'Client eth_subscribe subscriptions',
      labelNames: ['network', 'type'],
      registers,
    });
    this.upstreamSubscriptions = new Gauge({
      name: 'rpc_gateway_upstream_subscriptions',
      help: 'Upstream subscriptions shared by clients (one per network and distinct filter)',
      labelNames: ['network', 'type'],
      registers,
    });
    this.upstreamSubscribes = new Counter({
      name: 'rpc_gateway_upstream_subscribe_total',
      help: 'eth_subscribe calls sent to upstream nodes',
      labelNames: ['network', 'type'],
      registers,
    });
    this.subscriptionUpstream = new Gauge({
      name: 'rpc_gateway_subscription_upstream',
      help: "1 for the upstream node whose WebSocket carries the network's shared subscriptions",
      labelNames: ['network', 'upstream'],
      aggregator: 'max',
      registers,
    });
    const hubAges = this.hubAges;
    this.subscriptionNotificationAge = new Gauge({
      name: 'rpc_gateway_subscription_last_notification_age_seconds',
      help: "Seconds since the network's upstream subscriptions last sent a notification (absent without subscriptions)",
      labelNames: ['network'],
      aggregator: 'max',
      registers,
      collect() {
        for (const [network, age] of hubAges) {
          const seconds = age();
          if (seconds === undefined) this.remove({ network });
          else this.set({ network }, seconds);
        }
      },
    });
    this.subscriptionUpstreamAbandoned = new Counter({
      name: 'rpc_gateway_subscription_upstream_abandoned_total',
      help: 'Upstream WebSockets the subscription hub closed as silent, by reason (unhealthy, behind_pool_head, ping_unanswered)',
      labelNames: ['network', 'reason'],
      registers,
    });
    this.wsSlowClientsCut = new Counter({
      name: 'rpc_gateway_ws_slow_clients_cut_total',
      help: 'Client connections closed because they did not read fast enough',
      registers,
    });
    this.wsUnreadAnswerBytes = new Gauge({
      name: 'rpc_gateway_ws_unread_answer_bytes',
      help: 'Bytes of answers queued to client WebSocket connections and not yet written to their sockets, in this process (WS_MAX_UNREAD_BYTES_PER_ACCOUNT bounds each account)',
      registers,
    });
    this.credentialsKept = new Counter({
      name: 'rpc_gateway_credentials_kept_total',
      help: 'Token refreshes that failed (credential source unavailable) and left the token resolved before in service (stale-if-error)',
      registers,
    });
    const bytesInFlight = () => this.answerBytes();
    this.answerBytesInFlight = new Gauge({
      name: 'rpc_gateway_answer_bytes_in_flight',
      help: 'Bytes of node answers past 1 MiB being read or held until their request is answered, in this worker (MAX_ANSWER_BYTES_IN_FLIGHT)',
      registers,
      collect() {
        this.set(bytesInFlight());
      },
    });
    this.answersRefused = new Counter({
      name: 'rpc_gateway_answers_refused_total',
      help: 'Node answers refused (-32005 server busy) because the worker budget of answer bytes in flight could not hold them',
      registers,
    });
    this.grpcCalls = new Counter({
      name: 'rpc_gateway_grpc_calls_total',
      help: 'BorApi calls by method and gRPC status code',
      labelNames: ['method', 'code'],
      registers,
    });
  }
}

import type { Logger } from 'pino';
import type { GatewayMetrics } from '../observability/gateway-metrics';
import type { UpstreamPool } from './upstream-pool';
import { upstreamLabel } from './upstream-router';

/**
 * Asks every upstream for its head on an interval: reachability and block height (the selector
 * routes away from nodes that lag the pool). EVM: eth_blockNumber; S: its latest checkpoint.
 * A failed check counts against the node's breaker; a passing one may close it when no call
 * has been tried since it opened (ADR 0202 amendment, "Breaker").
 */
export class HealthChecker {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly pools: readonly UpstreamPool[],
    private readonly metrics: GatewayMetrics,
    private readonly logger: Logger,
    private readonly options: { intervalMs: number; timeoutMs: number },
  ) {}

  start(): void {
    void this.checkAll();
    this.timer = setInterval(() => void this.checkAll(), this.options.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  async checkAll(): Promise<void> {
    await Promise.all(this.pools.flatMap((pool) => pool.upstreams.map((u) => this.check(pool, u))));
  }

  private async check(
    pool: UpstreamPool,
    upstream: UpstreamPool['upstreams'][number],
  ): Promise<void> {
    const method =
      pool.network === 'sui-mainnet' ? 'sui_getLatestCheckpointSequenceNumber' : 'eth_blockNumber';
    const outcome = await upstream.post(
      `{"jsonrpc":"2.0","id":1,"method":"${method}","params":[]}`,
      this.options.timeoutMs,
      HEALTH_ANSWER_BYTES,
    );
    let height: number | undefined;
    if (outcome.ok) {
      try {
        const result = (JSON.parse(outcome.text) as { result?: unknown }).result;
        if (typeof result === 'string')
          height = result.startsWith('0x') ? Number.parseInt(result, 16) : Number(result);
      } catch {
        // not JSON: unhealthy below
      }
    }
    const healthy = height !== undefined && Number.isFinite(height);
    if (healthy !== upstream.healthy) {
      this.logger.warn(
        {
          network: pool.network,
          upstream: upstreamLabel(upstream),
          healthy,
          reason: outcome.ok ? undefined : outcome.reason,
        },
        'upstream health changed',
      );
    }
    upstream.healthy = healthy;
    // A hung or refusing node: a failed attempt to its breaker, so it opens without a client's
    // call waiting out the upstream timeout for it. A passing check closes an open breaker only
    // past its cooldown and while no call has been tried since it opened (an idle replica's
    // breaker would stay open forever); once calls are tried, their trial decides (a node may
    // answer eth_blockNumber and fail every call).
    if (!healthy)
      pool.checkFailed(upstream, outcome.ok ? 'health check: no height' : outcome.reason);
    else pool.checkPassed(upstream);
    if (healthy) upstream.height = height;
    const labels = { network: pool.network, upstream: upstreamLabel(upstream) };
    this.metrics.upstreamHealthy.set(labels, healthy ? 1 : 0);
    if (upstream.height !== undefined) this.metrics.upstreamHeight.set(labels, upstream.height);
  }
}

/** A head's answer is a few dozen bytes: a node answering more is not read further. */
const HEALTH_ANSWER_BYTES = 64 * 1024;

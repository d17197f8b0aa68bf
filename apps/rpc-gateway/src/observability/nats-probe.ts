import { Gauge, type Registry } from 'prom-client';
import type { Logger } from 'pino';

/**
 * NATS seen from the gateway, as a metric and a log line instead of a readiness check (ADR
 * 0212): while it is unreachable the gateway keeps serving from cached credentials and balance
 * state, its usage waits in memory (ADR 0103) and revocations arrive late, so it is a degraded
 * state to alert on, not a reason to leave the Service. One round trip (PING) per interval, never
 * two at once.
 */
export class NatsProbe {
  private readonly gauge: Gauge;
  private timer: NodeJS.Timeout | undefined;
  private inFlight = false;
  private connected: boolean | undefined;

  constructor(
    private readonly nats: { check(): Promise<void> },
    registry: Registry,
    private readonly logger: Logger,
    private readonly options: { intervalMs: number; timeoutMs: number },
  ) {
    // Created here, not in GatewayMetrics: a multi-process replica's primary has no NATS
    // connection, and its never-set 0 would win the `min` over its workers.
    this.gauge = new Gauge({
      name: 'rpc_gateway_nats_connected',
      help: '1 when the last round trip to NATS answered in time; 0 while usage waits in memory',
      aggregator: 'min',
      registers: [registry],
    });
  }

  /** The first round trip one interval after start: the connection opens in the background. */
  start(): void {
    this.timer = setInterval(() => void this.probe(), this.options.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /**
   * One round trip now; resolves once the gauge says what it found. A round trip still
   * unanswered at the timeout counts as unreachable, and no new one starts until it settles.
   */
  async probe(): Promise<void> {
    if (this.inFlight) return;
    this.inFlight = true;
    const check = this.nats.check().then(
      () => undefined,
      (e: unknown) => (e instanceof Error ? e.message : String(e)),
    );
    void check.then(() => (this.inFlight = false));
    let timer: NodeJS.Timeout | undefined;
    const error = await Promise.race([
      check,
      new Promise<string>((resolve) => {
        timer = setTimeout(
          () => resolve(`no answer within ${this.options.timeoutMs} ms`),
          this.options.timeoutMs,
        );
      }),
    ]);
    clearTimeout(timer);
    this.record(error);
  }

  private record(error: string | undefined): void {
    const connected = error === undefined;
    this.gauge.set(connected ? 1 : 0);
    if (connected === this.connected) return;
    // The first answer is logged only when it is bad; every change after it.
    if (!connected)
      this.logger.warn({ err: error }, 'NATS unreachable: serving on, usage held in memory');
    else if (this.connected === false) this.logger.info('NATS reachable again');
    this.connected = connected;
  }
}

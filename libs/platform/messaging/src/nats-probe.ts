import { Gauge, type Registry } from 'prom-client';
import type { NatsClientLogger } from './nats-client';

/** How often the connection is probed, and how long a round trip may take. */
export interface NatsProbeOptions {
  intervalMs: number;
  timeoutMs: number;
}

export const DEFAULT_NATS_PROBE: NatsProbeOptions = { intervalMs: 5_000, timeoutMs: 2_000 };

/**
 * NATS seen from an app, as a metric (`nats_connected`) and a log line instead of a readiness
 * check (ADR 0212 and its amendment): every app serves its requests without NATS (the gateway
 * from cached credentials and balance state, the REST APIs and billing's gRPC from Postgres),
 * while what NATS carries (usage, blocks, delivery jobs, state changes) waits in JetStream or in
 * memory. It is a degraded state to alert on, not a reason to leave the Service. One round trip
 * (PING) per interval, never two at once.
 */
export class NatsProbe {
  private readonly gauge: Gauge;
  private timer: NodeJS.Timeout | undefined;
  private inFlight = false;
  private connected: boolean | undefined;

  constructor(
    private readonly nats: { check(): Promise<void> },
    registry: Registry,
    private readonly logger: NatsClientLogger,
    private readonly options: NatsProbeOptions = DEFAULT_NATS_PROBE,
  ) {
    // `min`: a multi-process replica (rpc-gateway, ADR 0204) is connected when all its workers
    // are. Made by the app's MessagingModule, so a primary without a connection has none.
    this.gauge = new Gauge({
      name: 'nats_connected',
      help: '1 when the last round trip to NATS answered in time; 0 while what NATS carries waits',
      aggregator: 'min',
      registers: [registry],
    });
  }

  /** The first round trip one interval after start: the connection opens in the background. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.probe(), this.options.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
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
      this.logger.warn(
        { err: error },
        'NATS unreachable: serving on without it (nats_connected 0)',
      );
    else if (this.connected === false) this.logger.info({}, 'NATS reachable again');
    this.connected = connected;
  }
}

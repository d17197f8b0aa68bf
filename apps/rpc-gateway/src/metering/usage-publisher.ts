import { Events, type NodeUsage } from '@meridian/contracts';
import type { JetStreamPublisher } from '@meridian/platform-messaging';
import type { Logger } from 'pino';
import type { GatewayMetrics } from '../observability/gateway-metrics';
import type { UsageMeter } from './usage-meter';

/**
 * Once a second: one usage event per account for the window just closed. An event whose publish
 * fails is kept and re-sent with the same id (billing applies an id once), so nothing metered is
 * lost or counted twice; `stop` flushes what is left (graceful shutdown).
 */
export class UsageFlusher {
  private timer: NodeJS.Timeout | undefined;
  private windowStart: Date;
  private unsent: NodeUsage[] = [];
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly meter: UsageMeter,
    private readonly publisher: JetStreamPublisher,
    private readonly producerId: string,
    private readonly now: () => Date,
    private readonly metrics: GatewayMetrics,
    private readonly logger: Logger,
    private readonly intervalMs: number,
  ) {
    this.windowStart = now();
  }

  start(): void {
    this.timer = setInterval(() => void this.flush(), this.intervalMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
    // One more attempt for anything a failed publish left behind.
    if (this.unsent.length > 0) await this.flush();
  }

  flush(): Promise<void> {
    this.flushing = (this.flushing ?? Promise.resolve()).then(() => this.flushOnce());
    return this.flushing;
  }

  private async flushOnce(): Promise<void> {
    const end = this.now();
    const fresh =
      this.meter.pendingAccounts > 0
        ? this.meter.drain(this.producerId, this.windowStart, end)
        : [];
    if (fresh.length > 0) this.windowStart = end;
    const batch = [...this.unsent, ...fresh];
    this.unsent = [];
    for (let i = 0; i < batch.length; i++) {
      try {
        await this.publisher.publish(Events.usageRecorded, batch[i]!);
        this.metrics.usagePublished.inc({ outcome: 'ok' });
      } catch (error) {
        // NATS is down or the stream is missing: the rest would fail the same way. Keep them all
        // (same ids) for the next tick and log once, without a stack (this repeats every second).
        this.unsent = batch.slice(i);
        this.metrics.usagePublished.inc({ outcome: 'failed' });
        this.logger.warn(
          {
            pending_events: this.unsent.length,
            reason: error instanceof Error ? error.message : String(error),
          },
          'usage publish failed; will retry with the same ids',
        );
        return;
      }
    }
  }
}

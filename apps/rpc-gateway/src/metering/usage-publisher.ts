import {
  UsageFlusher,
  type UsageMeter,
  type UsagePartPublisher,
} from '@meridian/platform-messaging';
import type { UsageFlushVersion } from '@meridian/contracts';
import type { Logger } from 'pino';
import type { UsageWindow } from '../credentials/spend-estimate';
import type { GatewayMetrics } from '../observability/gateway-metrics';

/**
 * The gateway's usage flusher (ADR 0103): every `intervalMs`, the window just closed goes out as
 * one flush of every account's usage (split into parts above the size limit), published
 * together; a part NATS refused is re-sent with the same id. Counts parts in
 * `usagePublished{outcome}`.
 */
export function gatewayUsageFlusher(
  meter: UsageMeter,
  publisher: UsagePartPublisher,
  producerId: string,
  now: () => Date,
  metrics: GatewayMetrics,
  logger: Logger,
  intervalMs: number,
  version: UsageFlushVersion = 2,
  /** Told of each window handed to the flush (the spend estimates' UsageWindow). */
  window?: UsageWindow,
): UsageFlusher {
  return new UsageFlusher(publisher, {
    producerId,
    intervalMs,
    version,
    now,
    drain: () => {
      window?.cut();
      return meter.drain();
    },
    onPublished: (outcome) => metrics.usagePublished.inc({ outcome }),
    logger,
  });
}

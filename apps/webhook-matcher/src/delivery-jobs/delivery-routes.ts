import { Inject, Injectable } from '@nestjs/common';
import { deliveryRouteOf, KvBuckets, WebhookStatusEntrySchema } from '@meridian/contracts';
import { JetStreamConsumers } from '@meridian/platform-messaging';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';

/**
 * The delivery-worker route a job is published on (ADR 0432): the partition of its target's
 * host among DELIVERY_PARTITIONS workers, so each endpoint's limits and breaker live in one
 * worker. With one worker every job is route 0. With several, the target URL is the row at hand:
 * a test delivery's or a replay's, and on the matching path the match index's copy of the row
 * (ADR 0432 amendment), so a webhook created a moment before its first event is routed to its
 * host whether or not its status entry has reached this replica. Only a job of a webhook the
 * index no longer holds (a confirmation or removal after a pause or delete) asks the
 * webhook-status KV that every matcher replica mirrors (the worker reads the same entry to
 * deliver); the matching consumer starts once that mirror holds its first snapshot (`loaded`).
 * A webhook in neither goes on route 0: its worker still delivers it.
 */
@Injectable()
export class DeliveryRoutes {
  private readonly targetOf: (webhookId: string) => string | undefined;
  private readonly partitions: number;
  /** The targets `of` reads are in memory: the status mirror's first snapshot (one worker: now). */
  readonly loaded: Promise<void>;

  constructor(@Inject(APP_CONFIG) config: AppConfig, consumers: JetStreamConsumers) {
    this.partitions = config.DELIVERY_PARTITIONS;
    if (this.partitions <= 1) {
      this.targetOf = () => undefined;
      this.loaded = Promise.resolve();
      return;
    }
    const statuses = consumers.mirror(KvBuckets.webhookStatus.name, WebhookStatusEntrySchema);
    this.targetOf = (webhookId) => statuses.get(webhookId)?.targetUrl;
    this.loaded = statuses.initialized;
  }

  of(webhookId: string, targetUrl?: string): number {
    if (this.partitions <= 1) return 0;
    const url = targetUrl ?? this.targetOf(webhookId);
    return url === undefined ? 0 : deliveryRouteOf(url, this.partitions);
  }
}

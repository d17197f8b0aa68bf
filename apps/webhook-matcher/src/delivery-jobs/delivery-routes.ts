import { Inject, Injectable } from '@nestjs/common';
import { deliveryRouteOf, KvBuckets, WebhookStatusEntrySchema } from '@meridian/contracts';
import { JetStreamConsumers } from '@meridian/platform-messaging';
import { APP_CONFIG } from '../config/app-config.token';
import type { AppConfig } from '../config/config';

/**
 * The delivery-worker route a job is published on (ADR 0432): the partition of its target's
 * host among DELIVERY_PARTITIONS workers, so each endpoint's limits and breaker live in one
 * worker. With one worker every job is route 0. With several, the target URL is the row at hand
 * (a test delivery, a replay) or, on the matching path that knows only the webhook id, the
 * webhook-status KV that every matcher replica mirrors (the worker reads the same entry to
 * deliver). The matching consumer starts only once that mirror holds its first snapshot
 * (`loaded`), so a backlog met at start is not routed before the targets are known. A webhook
 * not in the mirror yet (created a moment ago) goes on route 0: its worker still delivers it,
 * only that endpoint's limits are shared with its owner's for the moment.
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

import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { Consumers, Events } from '@meridian/contracts';
import { isEvent, JetStreamConsumers, type ConsumedMessage } from '@meridian/platform-messaging';
import { StatusService } from '../status/status.service';
import { DeliveriesRepository } from './deliveries.repository';

/**
 * delivery-worker's attempt outcomes → the attempt log, the stats, and the two service
 * decisions of the status machine: every failed (or breaker-skipped) attempt feeds the
 * auto-pause rule (30 min of failing deliveries with ≥ 20 attempts), and a `no_balance` failure
 * says the webhook has events to deliver at zero balance (30 min → paused_no_balance). The
 * decisions themselves are H4's StatusService; this only gathers the facts. It takes them as soon
 * as an outcome makes them due; `ServiceDecisionSweep` takes them when the 30 minutes run out
 * with no outcome arriving.
 */
@Injectable()
export class DeliveryHealthConsumer implements OnApplicationBootstrap {
  constructor(
    private readonly consumers: JetStreamConsumers,
    private readonly deliveries: DeliveriesRepository,
    private readonly status: StatusService,
  ) {}

  onApplicationBootstrap(): void {
    this.consumers.run(Consumers.matcherDeliveryHealth, (message) => this.handle(message));
  }

  async handle(message: ConsumedMessage): Promise<void> {
    if (!isEvent(message, Events.deliveryHealth)) return;
    const health = message.payload;
    const { stats } = await this.deliveries.record(health);
    // Decisions are re-evaluated on redelivery too (they are idempotent transitions).
    if (health.test || health.outcome === 'success' || health.outcome === 'dropped') return;
    const facts = stats ?? (await this.deliveries.stats(health.webhookId)).stats;
    if (facts)
      await this.status.applyDeliveryHealth(health.webhookId, {
        failingSince: facts.failing_since,
        attemptsSinceFailing: facts.attempts_since_failing,
      });
    if (health.errorClass === 'no_balance')
      await this.status.applyNoBalance(health.webhookId, { hasEventsToDeliver: true });
  }
}

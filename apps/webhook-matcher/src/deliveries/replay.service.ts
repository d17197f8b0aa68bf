import { Inject, Injectable } from '@nestjs/common';
import { DeliveryRoutes } from '../delivery-jobs/delivery-routes';
import {
  DeliveryPhaseSchema,
  Events,
  deliveryJobId,
  type DeliveryJob,
  type DeliveryPhase,
} from '@meridian/contracts';
import { DomainError } from '@meridian/errors';
import { JetStreamPublisher } from '@meridian/platform-messaging';
import type { Clock } from '@meridian/time';
import { CLOCK } from '../common/clock.token';
import { StatusPublisher } from '../status/status-publisher.service';
import { WebhooksService } from '../webhooks/webhooks.service';
import { DeliveriesRepository } from './deliveries.repository';

/** Events replayed by one range request at most (a larger range is cut into several calls). */
export const REPLAY_LIMIT = 1_000;

/**
 * Replay (beyond the reference): a given-up event goes out again as a new delivery job of the
 * same eventId and phase (receivers de-duplicate on eventId + phase, so a receiver that already
 * has it may ignore it). The job id carries a replay stamp, so the worker starts a fresh run of
 * 8 attempts, each billed like any other. Only what is still given up is replayed: not a phase
 * delivered since, nor one whose replay is still running (`DeliveriesRepository.givenUp`, claimed
 * atomically by `claimReplays`).
 */
@Injectable()
export class ReplayService {
  constructor(
    private readonly webhooks: WebhooksService,
    private readonly deliveries: DeliveriesRepository,
    private readonly jobs: JetStreamPublisher,
    private readonly statusPublisher: StatusPublisher,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly routes: DeliveryRoutes,
  ) {}

  async replay(
    accountId: string,
    webhookId: string,
    range: Parameters<DeliveriesRepository['givenUp']>[1],
  ): Promise<{ replayed: number; event_ids: string[] }> {
    const row = await this.webhooks.get(accountId, webhookId);
    if (row.status !== 'active')
      throw new DomainError(
        'webhook_not_active',
        'conflict',
        `replays are sent only while active (now ${row.status})`,
      );
    const now = this.clock.now();
    const stamp = now.getTime().toString(36);
    const jobIdOf = (e: { event_id: string; phase: string }) =>
      `${deliveryJobId(webhookId, e.event_id, e.phase as DeliveryPhase)}:replay-${stamp}`;
    // Claimed in the database, so a replay still running is not replayed again by a request
    // racing this one, here or on another replica (README "Delivery log, stats and replay").
    const events = await this.deliveries.claimReplays(
      webhookId,
      await this.deliveries.givenUp(webhookId, range, REPLAY_LIMIT, now),
      jobIdOf,
      now,
    );
    if ('eventId' in range && events.length === 0)
      throw new DomainError('not_found', 'not_found', 'no given-up delivery of this event');
    let sent = 0;
    try {
      await this.statusPublisher.publish([webhookId]);
      for (const event of events) {
        const phase = event.phase as DeliveryPhase;
        // The phases of this event replayed together and going before this one: the only
        // earlier deliveries of its stamp (a replay of `removed` alone waits for none).
        const order = DeliveryPhaseSchema.options;
        const earlierPhases = order
          .slice(0, order.indexOf(phase))
          .filter((p) => events.some((e) => e.event_id === event.event_id && e.phase === p));
        const job: DeliveryJob = {
          id: jobIdOf(event),
          webhookId,
          accountId,
          eventId: event.event_id,
          phase,
          test: false,
          attempt: 1,
          payload: event.payload,
          createdAt: now.toISOString(),
          route: this.routes.of(webhookId, row.target_url),
          earlierPhases,
        };
        await this.jobs.publish(Events.deliveryJob, job);
        sent += 1;
      }
    } catch (err) {
      // The claims of the jobs not published go, so the owner may ask again for those; the ones
      // published run and keep theirs.
      await this.deliveries.releaseReplays(webhookId, events.slice(sent).map(jobIdOf));
      throw err;
    }
    return { replayed: events.length, event_ids: [...new Set(events.map((e) => e.event_id))] };
  }
}

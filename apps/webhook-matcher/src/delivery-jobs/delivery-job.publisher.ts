import { deliveryJobId, Events, type DeliveryJob, type DeliveryPhase } from '@meridian/contracts';
import type { JetStreamPublisher } from '@meridian/platform-messaging';
import { payloadInPhase, type EventBody } from '@meridian/webhooks';
import type { PublishTally } from '../matching/matching-metrics';

export interface JobRequest {
  readonly webhookId: string;
  readonly accountId: string;
  readonly eventId: string;
  readonly phase: DeliveryPhase;
  /** The body of any phase of the event; the phase's flags are set here. */
  readonly payload: EventBody;
  /** The webhook's target when the matcher's index holds it (the route's host). */
  readonly targetUrl?: string;
  /** The event's phases published to the webhook before this one (`phasesPublishedBefore`). */
  readonly earlierPhases?: readonly DeliveryPhase[];
}

const PARALLEL = 256;

/**
 * Publishes delivery jobs on the WEBHOOK stream, Nats-Msg-Id = the job id
 * (`<webhookId>:<eventId>:<phase>`): a job published again after a crash or a redelivered block
 * is dropped by the stream as a duplicate, so each job exists once.
 */
export class DeliveryJobPublisher {
  published = 0;
  duplicates = 0;

  constructor(
    private readonly publisher: JetStreamPublisher,
    private readonly now: () => Date = () => new Date(),
    /** The job's delivery-worker route (DeliveryRoutes.of); one worker: 0. */
    private readonly routeOf: (webhookId: string, targetUrl?: string) => number = () => 0,
  ) {}

  /**
   * Publishes every job; `settled` hears what the batch came to, also when some jobs were not
   * taken: then every publish of the failed slice is awaited and the first failure is thrown as
   * it came (a DomainError of the publisher: the consumer's retry decision stays its own).
   */
  async publishAll(
    requests: readonly JobRequest[],
    settled?: (tally: PublishTally) => void,
  ): Promise<void> {
    let published = 0;
    let duplicates = 0;
    let failed = 0;
    let firstFailure: unknown;
    for (let i = 0; i < requests.length && failed === 0; i += PARALLEL) {
      const results = await Promise.allSettled(
        requests
          .slice(i, i + PARALLEL)
          .map((r) => this.publisher.publish(Events.deliveryJob, this.jobOf(r))),
      );
      for (const r of results) {
        if (r.status === 'rejected') {
          if (failed++ === 0) firstFailure = r.reason;
        } else if (r.value.duplicate) duplicates += 1;
        else published += 1;
      }
    }
    this.published += published;
    this.duplicates += duplicates;
    settled?.({ published, duplicates, failed });
    if (failed > 0) throw firstFailure;
  }

  private jobOf(r: JobRequest): DeliveryJob {
    return {
      id: deliveryJobId(r.webhookId, r.eventId, r.phase),
      webhookId: r.webhookId,
      accountId: r.accountId,
      eventId: r.eventId,
      phase: r.phase,
      test: false,
      attempt: 1,
      payload: payloadInPhase(r.payload, r.phase),
      createdAt: this.now().toISOString(),
      route: this.routeOf(r.webhookId, r.targetUrl),
      ...(r.earlierPhases === undefined ? {} : { earlierPhases: [...r.earlierPhases] }),
    };
  }
}

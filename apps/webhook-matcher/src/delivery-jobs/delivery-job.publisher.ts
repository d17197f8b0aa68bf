import { deliveryJobId, Events, type DeliveryJob, type DeliveryPhase } from '@meridian/contracts';
import type { JetStreamPublisher } from '@meridian/platform-messaging';
import { payloadInPhase, type EventBody } from '@meridian/webhooks';

export interface JobRequest {
  readonly webhookId: string;
  readonly accountId: string;
  readonly eventId: string;
  readonly phase: DeliveryPhase;
  /** The body of any phase of the event; the phase's flags are set here. */
  readonly payload: EventBody;
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
    /** The job's delivery-worker route (DeliveryRoutes); one worker: 0. */
    private readonly routeOf: (webhookId: string) => number = () => 0,
  ) {}

  async publishAll(requests: readonly JobRequest[]): Promise<void> {
    for (let i = 0; i < requests.length; i += PARALLEL) {
      const results = await Promise.all(
        requests
          .slice(i, i + PARALLEL)
          .map((r) => this.publisher.publish(Events.deliveryJob, this.jobOf(r))),
      );
      for (const r of results) {
        if (r.duplicate) this.duplicates += 1;
        else this.published += 1;
      }
    }
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
      route: this.routeOf(r.webhookId),
    };
  }
}

import { Events, type DeliveryHealth } from '@meridian/contracts';
import { DomainError } from '@meridian/errors';
import { PubAckBatch, type NatsClient, type NatsNamespace } from '@meridian/platform-messaging';
import { headers, type NatsConnection } from '@nats-io/transport-node';

/** How long a batch waits for its PubAcks before every unanswered event of it fails. */
export const HEALTH_PUBACK_TIMEOUT_MS = 5_000;

/**
 * Publishes DeliveryHealth events in batches and settles each caller only when the stream
 * acknowledged its own event (PubAck; a duplicate id counts, the stream already holds it).
 * The handler acks its job after that, so an acked job's outcome is always on the stream; a
 * caller whose event was refused, or whose batch got no PubAck within the timeout, or whose
 * batch could not be written at all, gets a retryable `messaging_unavailable` and its job is
 * put back (never acked).
 *
 * The events of one turn of the event loop go out together through `PubAckBatch` (one inbox
 * subscription, one timer a batch) rather than a `JetStreamPublisher.publish` request each. The
 * payload is validated against its contract all the same (a producer bug must not reach the
 * stream).
 */
export class HealthPublisher {
  private queue: { health: DeliveryHealth; resolve: () => void; reject: (e: unknown) => void }[] =
    [];
  private scheduled = false;
  private readonly batch = new PubAckBatch();

  constructor(
    private readonly client: NatsClient,
    private readonly namespace: NatsNamespace,
    private readonly timeoutMs = HEALTH_PUBACK_TIMEOUT_MS,
  ) {}

  publish(health: DeliveryHealth): Promise<void> {
    const parsed = Events.deliveryHealth.schema.safeParse(health);
    if (!parsed.success)
      return Promise.reject(
        new DomainError('invalid_event_payload', 'internal', 'invalid delivery health payload', {
          retryable: false,
          details: {
            issues: parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.')}: ${i.message}`),
          },
        }),
      );
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ health: parsed.data as DeliveryHealth, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.flush);
      }
    });
  }

  /** Events still waiting for a PubAck (tests, shutdown). */
  get inFlight(): number {
    return this.batch.inFlight + this.queue.length;
  }

  async close(): Promise<void> {
    this.batch.close();
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    const items = this.queue;
    this.queue = [];
    if (items.length === 0) return;
    let nc: NatsConnection;
    try {
      nc = this.client.require();
    } catch (error) {
      for (const item of items) item.reject(unavailable(error));
      return;
    }
    const stream = this.namespace.stream(Events.deliveryHealth.stream);
    const messages = items.map(({ health }) => {
      const h = headers();
      h.set('Nats-Msg-Id', Events.deliveryHealth.messageIdOf(health));
      h.set('Nats-Expected-Stream', stream);
      return {
        subject: this.namespace.subject(Events.deliveryHealth.subjectOf(health)),
        data: JSON.stringify(health),
        headers: h,
      };
    });
    this.batch.publish(nc, messages, this.timeoutMs, (index, error) => {
      const item = items[index]!;
      if (error) item.reject(unavailable(error));
      else item.resolve();
    });
  };
}

function unavailable(cause: unknown): DomainError {
  if (cause instanceof DomainError) return cause;
  return new DomainError(
    'messaging_unavailable',
    'unavailable',
    `publish of delivery health failed: ${cause instanceof Error ? cause.message : String(cause)}`,
    { cause },
  );
}

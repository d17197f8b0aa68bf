import { Events, type DeliveryHealth } from '@meridian/contracts';
import { DomainError } from '@meridian/errors';
import type { NatsClient, NatsNamespace } from '@meridian/platform-messaging';
import {
  createInbox,
  headers,
  type Msg,
  type NatsConnection,
  type Subscription,
} from '@nats-io/transport-node';

/** How long a batch waits for its PubAcks before every unanswered event of it fails. */
export const HEALTH_PUBACK_TIMEOUT_MS = 5_000;

interface Pending {
  resolve: () => void;
  reject: (error: unknown) => void;
  batch: Batch;
}

interface Batch {
  open: number;
  timer: NodeJS.Timeout | undefined;
}

/**
 * Publishes DeliveryHealth events in batches and settles each caller only when the stream
 * acknowledged its own event (PubAck; a duplicate id counts, the stream already holds it).
 * The handler acks its job after that, so an acked job's outcome is always on the stream; a
 * caller whose event was refused, or whose batch got no PubAck within the timeout, or whose
 * batch could not be written at all, gets a retryable `messaging_unavailable` and its job is
 * put back (never acked).
 *
 * Why not `JetStreamPublisher.publish` per event: each is a NATS request with its own timer,
 * promise, inbox token and a RequestError the client builds to cancel it even on success. Here
 * the events of one turn of the event loop go out together, the PubAcks come back on one
 * wildcard subscription, and one timer covers the batch. The payload is validated against its
 * contract all the same (a producer bug must not reach the stream).
 */
export class HealthPublisher {
  private queue: { health: DeliveryHealth; pending: Pending }[] = [];
  private readonly waiting = new Map<string, Pending>();
  private scheduled = false;
  private inbox = '';
  private subscription: Subscription | undefined;
  private connection: NatsConnection | undefined;
  private seq = 0;

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
      this.queue.push({
        health: parsed.data as DeliveryHealth,
        pending: { resolve, reject, batch: undefined as unknown as Batch },
      });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.flush);
      }
    });
  }

  /** Events still waiting for a PubAck (tests, shutdown). */
  get inFlight(): number {
    return this.waiting.size + this.queue.length;
  }

  async close(): Promise<void> {
    const sub = this.subscription;
    this.subscription = undefined;
    this.connection = undefined;
    sub?.unsubscribe();
    for (const [token, pending] of this.waiting) this.fail(token, pending, 'publisher closed');
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    const items = this.queue;
    this.queue = [];
    if (items.length === 0) return;
    const batch: Batch = { open: 0, timer: undefined };
    let nc: NatsConnection;
    try {
      nc = this.client.require();
      this.subscribe(nc);
    } catch (error) {
      for (const item of items) item.pending.reject(unavailable(error));
      return;
    }
    const stream = this.namespace.stream(Events.deliveryHealth.stream);
    const tokens: string[] = [];
    for (const { health, pending } of items) {
      const token = String((this.seq += 1));
      pending.batch = batch;
      try {
        const h = headers();
        h.set('Nats-Msg-Id', Events.deliveryHealth.messageIdOf(health));
        h.set('Nats-Expected-Stream', stream);
        this.waiting.set(token, pending);
        batch.open += 1;
        tokens.push(token);
        nc.publish(
          this.namespace.subject(Events.deliveryHealth.subjectOf(health)),
          JSON.stringify(health),
          { reply: `${this.inbox}.${token}`, headers: h },
        );
      } catch (error) {
        // Not written (connection closing): this event fails now, the batch's others wait.
        this.fail(token, pending, error);
      }
    }
    if (batch.open > 0)
      batch.timer = setTimeout(() => {
        for (const token of tokens) {
          const pending = this.waiting.get(token);
          if (pending) this.fail(token, pending, `no PubAck within ${this.timeoutMs} ms`);
        }
      }, this.timeoutMs);
  };

  private subscribe(nc: NatsConnection): void {
    if (this.subscription && this.connection === nc && !this.subscription.isClosed()) return;
    this.connection = nc;
    this.inbox = createInbox();
    this.subscription = nc.subscribe(`${this.inbox}.*`, {
      callback: (error, msg) => {
        if (error) return; // the subscription closed: the open batches fail on their timers
        this.onPubAck(msg);
      },
    });
  }

  private onPubAck(msg: Msg): void {
    const token = msg.subject.slice(this.inbox.length + 1);
    const pending = this.waiting.get(token);
    if (!pending) return; // timed out already
    if (msg.data.length === 0) {
      // A status message (503: no stream listens on the subject).
      this.fail(token, pending, `no stream answered (${msg.headers?.code ?? 'empty reply'})`);
      return;
    }
    let ack: { stream?: string; seq?: number; error?: { description?: string } };
    try {
      ack = msg.json();
    } catch (error) {
      this.fail(token, pending, error);
      return;
    }
    if (ack.error || typeof ack.seq !== 'number') {
      this.fail(token, pending, ack.error?.description ?? 'invalid PubAck');
      return;
    }
    this.settle(token, pending);
    pending.resolve();
  }

  private fail(token: string, pending: Pending, cause: unknown): void {
    this.settle(token, pending);
    pending.reject(unavailable(cause));
  }

  private settle(token: string, pending: Pending): void {
    this.waiting.delete(token);
    const batch = pending.batch;
    batch.open -= 1;
    if (batch.open === 0) clearTimeout(batch.timer);
  }
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

import type { EventContract, PayloadOf } from '@meridian/contracts';
import { DomainError } from '@meridian/errors';
import type { NatsClient } from './nats-client';
import type { NatsNamespace } from './nats-namespace';

export interface PublishResult {
  stream: string;
  seq: number;
  /** True when the stream already held a message with this Nats-Msg-Id (nothing stored). */
  duplicate: boolean;
}

/**
 * Publishes events to JetStream: validates the payload with its contract's schema, derives the
 * subject and `Nats-Msg-Id` from it, and resolves only once the stream acknowledged storage
 * (PubAck). Errors are DomainErrors: `messaging_unavailable` (retryable: NATS down, no stream
 * answered, timeout) or `invalid_event_payload` (a producer bug; not retryable).
 */
export class JetStreamPublisher {
  constructor(
    private readonly client: NatsClient,
    private readonly namespace: NatsNamespace,
    private readonly timeoutMs = 5_000,
  ) {}

  async publish<C extends EventContract>(
    contract: C,
    payload: PayloadOf<C>,
  ): Promise<PublishResult> {
    const parsed = contract.schema.safeParse(payload);
    if (!parsed.success) {
      throw new DomainError(
        'invalid_event_payload',
        'internal',
        `invalid ${contract.type} payload`,
        {
          retryable: false,
          details: {
            issues: parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.')}: ${i.message}`),
          },
        },
      );
    }
    const body = parsed.data as PayloadOf<C>;
    return this.publishJson(
      contract.subjectOf(body),
      body,
      contract.messageIdOf(body),
      this.namespace.stream(contract.stream),
    );
  }

  /**
   * Publishes any JSON body to an unprefixed subject with an explicit idempotency id (dead
   * letters, tests). Prefer `publish(contract, payload)`.
   */
  async publishJson(
    subject: string,
    body: unknown,
    msgId: string,
    expectStream?: string,
  ): Promise<PublishResult> {
    const js = this.client.jetstream();
    try {
      const ack = await js.publish(this.namespace.subject(subject), JSON.stringify(body), {
        msgID: msgId,
        timeout: this.timeoutMs,
        ...(expectStream ? { expect: { streamName: expectStream } } : {}),
      });
      return { stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate };
    } catch (error) {
      throw new DomainError(
        'messaging_unavailable',
        'unavailable',
        `publish to ${subject} failed`,
        { cause: error },
      );
    }
  }
}

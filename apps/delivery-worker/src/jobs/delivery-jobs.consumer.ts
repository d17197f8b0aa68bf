import { Events, type ConsumerDeclaration, type DeliveryJob } from '@meridian/contracts';
import { DomainError } from '@meridian/errors';
import { isEvent, type ConsumedMessage } from '@meridian/platform-messaging';
import type { DeliveryEngine } from './delivery-engine';

/** Put-back after an unexpected failure (Postgres or NATS away): soon, not on the schedule. */
const FAILURE_RETRY_MS = 5_000;

/**
 * The JetStream side of delivery jobs: a `done` step acks; a `wait` step naks with its delay
 * (a DomainError carrying retryAfterMs, the runner's one mapping). While waiting, the job
 * keeps no consumer slot, so one customer's held events never hold up another's.
 */
export function deliveryJobsHandler(engine: DeliveryEngine) {
  return async (message: ConsumedMessage): Promise<void> => {
    if (!isEvent(message, Events.deliveryJob)) return;
    const job: DeliveryJob = message.payload;
    let step;
    try {
      step = await engine.handle(job, message.deliveryCount === 1);
    } catch (error) {
      throw new DomainError('delivery_failed', 'unavailable', 'delivery job failed; retried', {
        retryable: true,
        details: { retryAfterMs: FAILURE_RETRY_MS },
        cause: error,
      });
    }
    if (step.action === 'wait')
      throw new DomainError('delivery_waiting', 'unavailable', `waiting: ${step.reason}`, {
        retryable: true,
        details: { retryAfterMs: step.ms },
      });
  };
}

export type DeliveryConsumer = ConsumerDeclaration;

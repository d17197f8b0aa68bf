import { Events, type ConsumerDeclaration, type DeliveryJob } from '@meridian/contracts';
import { DomainError } from '@meridian/errors';
import {
  isEvent,
  redeliverAfter,
  type ConsumedMessage,
  type Redeliver,
} from '@meridian/platform-messaging';
import type { DeliveryEngine } from './delivery-engine';

/** Put-back after an unexpected failure (Postgres or NATS away): soon, not on the schedule. */
const FAILURE_RETRY_MS = 5_000;

/**
 * The JetStream side of delivery jobs: a `done` step acks; a `wait` step (`not_due`,
 * `earlier_delivery`, `endpoint_busy`, a balance) is returned as `redeliverAfter`, which the
 * runner naks with its delay and logs at debug only: a scheduled wait is not a failure (a soak
 * logged 0.7 'handler failed' warnings per attempt when waits were thrown). Waits are counted
 * by reason in `delivery_waits_total`. While waiting, the job keeps no consumer slot, so one
 * customer's held events never hold up another's. Only a failure of the engine throws.
 */
export function deliveryJobsHandler(engine: DeliveryEngine) {
  return async (message: ConsumedMessage): Promise<void | Redeliver> => {
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
    if (step.action === 'wait') return redeliverAfter(step.ms, step.reason);
  };
}

export type DeliveryConsumer = ConsumerDeclaration;

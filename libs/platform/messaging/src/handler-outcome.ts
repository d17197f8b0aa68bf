import type { ConsumerDeclaration, DeadLetterReason } from '@meridian/contracts';
import { isDomainError } from '@meridian/errors';

export type HandlerOutcome =
  | { action: 'ack' }
  | { action: 'nak'; delayMs: number }
  | { action: 'dead_letter'; reason: DeadLetterReason; code: string; message: string };

/** Delay before redelivery number `deliveryCount + 1`: the consumer's backoff, last step repeating. */
export function backoffDelay(backoffMs: readonly number[], deliveryCount: number): number {
  if (backoffMs.length === 0) return 0;
  return backoffMs[Math.min(Math.max(deliveryCount, 1), backoffMs.length) - 1]!;
}

/**
 * How a handler's failure maps to JetStream (the one place this mapping lives):
 * - DomainError retryable → nak(delay): `details.retryAfterMs` if given, else the backoff step;
 * - DomainError not retryable → dead letter (term + DLQ copy), reason `permanent_error`;
 * - any other error (a bug, a driver error) → treated as retryable: it may be transient, and
 *   maxDeliver bounds it. A dependency out of reach (Postgres stopped) is not the message's
 *   failure and never gets here: the runner holds the message until it answers (its gates);
 * - retryable but this was delivery `maxDeliver` → dead letter, reason `max_deliver` (the server
 *   would otherwise stop delivering it silently).
 */
export function outcomeOfError(
  error: unknown,
  deliveryCount: number,
  consumer: Pick<ConsumerDeclaration, 'maxDeliver' | 'backoffMs'>,
): HandlerOutcome {
  const code = isDomainError(error) ? error.code : 'unexpected_error';
  const message = error instanceof Error ? error.message : String(error);
  if (isDomainError(error) && !error.retryable) {
    return { action: 'dead_letter', reason: 'permanent_error', code, message };
  }
  if (deliveryCount >= consumer.maxDeliver) {
    return { action: 'dead_letter', reason: 'max_deliver', code, message };
  }
  const retryAfter = isDomainError(error) ? error.details?.['retryAfterMs'] : undefined;
  const delayMs =
    typeof retryAfter === 'number' && retryAfter >= 0
      ? retryAfter
      : backoffDelay(consumer.backoffMs, deliveryCount);
  return { action: 'nak', delayMs };
}

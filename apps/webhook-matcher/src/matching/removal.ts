import type { StoredEvent } from './matching.repository';

/**
 * Whether a reorg that orphans this recorded event sends its webhook a `removed` correction
 * (ADR 0421 "Phases" and its amendment; spec: a correction is "also sent for an event this
 * webhook never received"):
 * - a webhook subscribed to the unconfirmed phase: always, dropped events included (it was owed
 *   the unconfirmed delivery, sent or not);
 * - a confirmed-only webhook: when its confirmed delivery was published (state `confirmed`),
 *   delivered or not: the "credit on confirmation" receiver must hear that it was undone. One
 *   still pending confirmation (or dropped by the budget) was owed nothing yet: its confirmation
 *   is cancelled and nothing is sent, so the receiver never sees an eventId it cannot place.
 * An occurrence already removed by an earlier reorg is never corrected twice (the caller skips
 * `removed` rows).
 */
export function receivesRemoval(event: Pick<StoredEvent, 'phases' | 'state'>): boolean {
  if (event.state === 'removed') return false;
  return event.phases.includes('unconfirmed') || event.state === 'confirmed';
}

import type { DeliveryPhase } from '@meridian/contracts';
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

/**
 * The phases of this recorded event published to its webhook before a job of `phase`, in order:
 * the job carries them (`DeliveryJob.earlierPhases`) so the worker waits only for deliveries that
 * exist. `unconfirmed` when the webhook subscribes to it and the budget did not drop the event;
 * `confirmed` once its confirmation was published (state `confirmed`). So a removal of an event
 * whose confirmation was cancelled, or that the budget dropped, names no phase never sent, and a
 * restarted worker does not hold it for one (QA: such a `removed` waited out its 90 s grace).
 */
export function phasesPublishedBefore(
  event: Pick<StoredEvent, 'phases' | 'state' | 'dropped'>,
  phase: DeliveryPhase,
): DeliveryPhase[] {
  if (phase === 'unconfirmed') return [];
  const published: DeliveryPhase[] = [];
  if (!event.dropped && event.phases.includes('unconfirmed')) published.push('unconfirmed');
  if (phase === 'removed' && event.state === 'confirmed') published.push('confirmed');
  return published;
}

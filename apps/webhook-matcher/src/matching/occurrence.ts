import { eventIdOf, type EventKey } from '@meridian/webhooks';
import type { StoredEvent } from './matching.repository';

/**
 * The eventId under which a matched activity is (or is to be) recorded, or null when this
 * occurrence is recorded already (a redelivered block: its decision stands). An occurrence a
 * reorg removed stays removed; when its block is canonical again the activity is the next
 * occurrence, with its own eventId and jobs (ADR 0421 "A block that comes back").
 */
export function occurrenceOf(
  webhookId: string,
  firstEventId: string,
  key: EventKey,
  known: ReadonlyMap<string, Pick<StoredEvent, 'state'>>,
): string | null {
  let eventId = firstEventId;
  for (let occurrence = 1; ; occurrence++) {
    const row = known.get(`${webhookId}:${eventId}`);
    if (row === undefined) return eventId;
    if (row.state !== 'removed') return null;
    eventId = eventIdOf({ ...key, occurrence });
  }
}

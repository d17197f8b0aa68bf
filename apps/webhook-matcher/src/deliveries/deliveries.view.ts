import { MAX_DELIVERY_ATTEMPTS } from '@meridian/webhooks';
import type { AttemptRow, StatsRow } from './deliveries.repository';
import type { DeliveryAttempt, DeliveryStats } from './deliveries.schemas';

/**
 * The event's attempts left after this row (spec: "one event is attempted at most 8 times",
 * across its deliveries; ADR 0431 amendment): 8 − its slot; none after a test delivery (one
 * attempt) or a drop for a spent budget; unknown for other drops (not attempts) and for attempts
 * recorded without a slot.
 */
function eventAttemptsLeft(row: AttemptRow): number | null {
  if (row.test) return 0;
  if (row.outcome === 'dropped') return row.error_class === 'attempts_spent' ? 0 : null;
  if (row.outcome === 'rate_limited') return null;
  return row.event_attempt === null ? null : MAX_DELIVERY_ATTEMPTS - row.event_attempt;
}

export function attemptView(row: AttemptRow): DeliveryAttempt {
  return {
    event_id: row.event_id,
    phase: row.phase,
    attempt: row.attempt,
    event_attempt:
      row.outcome === 'dropped' || row.outcome === 'rate_limited' ? null : row.event_attempt,
    event_attempts_left: eventAttemptsLeft(row),
    at: row.at.toISOString(),
    outcome: row.outcome,
    final: row.final,
    test: row.test,
    billed: row.billed,
    status_code: row.status_code,
    duration_ms: row.duration_ms,
    error_class: row.error_class,
    error: row.error,
    response_body: row.response_body,
    network: row.network,
    block_number: row.block_number === null ? null : Number(row.block_number),
    tx_hash: row.tx_hash,
    addresses: row.addresses ?? [],
  };
}

export function statsView(stats: StatsRow | undefined, rateLimited: string): DeliveryStats {
  return {
    delivered_total: Number(stats?.delivered_total ?? 0),
    failed_total: Number(stats?.failed_total ?? 0),
    rate_limited_total: Number(rateLimited),
    last_delivered_at: stats?.last_delivered_at?.toISOString() ?? null,
  };
}

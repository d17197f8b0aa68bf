import type { AttemptRow, StatsRow } from './deliveries.repository';
import type { DeliveryAttempt, DeliveryStats } from './deliveries.schemas';

export function attemptView(row: AttemptRow): DeliveryAttempt {
  return {
    event_id: row.event_id,
    phase: row.phase,
    attempt: row.attempt,
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

import type { LeaseAnswer, LeaseRequest } from './leased-rate-limiter';
import type { RateLimiter } from './token-bucket';

/** Where a lease came from: the fleet's shared bucket, or this process's own (store down). */
export type LeaseSource = 'fleet' | 'local';

export interface FleetLeaseStore {
  lease(request: LeaseRequest, nowMs: number): Promise<LeaseAnswer>;
}

/**
 * The `ask` of a process's LeasedRateLimiter when plan RPS is fleet-wide (ADR 0102): leases
 * come from the shared store; while the store is unreachable they come from a bucket of this
 * process alone (fail open to the per-process limit: the account keeps its plan RPS on each
 * process, never unlimited and never refused because our store is down). `onLease` reports
 * each lease's source (metrics, logs on a change).
 */
export function fleetLeases(
  store: FleetLeaseStore,
  local: RateLimiter,
  now: () => number,
  onLease: (source: LeaseSource) => void = () => undefined,
): (request: LeaseRequest) => Promise<LeaseAnswer> {
  return async (request) => {
    try {
      const answer = await store.lease(request, now());
      onLease('fleet');
      return answer;
    } catch {
      onLease('local');
      return local.lease(
        request.accountId,
        request.needed,
        request.wanted,
        // Tokens given back came from the store or from here: either way, this bucket is the
        // only one reachable now, and it never holds more than one second of the rate.
        request.returned,
        request.ratePerSecond,
      );
    }
  };
}

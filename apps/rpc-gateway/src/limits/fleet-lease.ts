import { StoreTimeoutError } from './fleet-bucket-store';
import type { LeaseAnswer, LeaseRequest } from './leased-rate-limiter';
import type { RateLimiter } from './token-bucket';

/** Where a lease came from: the fleet's shared bucket, or this process's own (store down). */
export type LeaseSource = 'fleet' | 'local';

export interface FleetLeaseStore {
  /** Rejects with a StoreTimeoutError (carrying the answer, should one come) when slow. */
  lease(request: LeaseRequest, nowMs: number): Promise<LeaseAnswer>;
}

/**
 * The `ask` of a process's LeasedRateLimiter when plan RPS is fleet-wide (ADR 0102): leases
 * come from the shared store; while the store is unreachable they come from a bucket of this
 * process alone (fail open to the per-process limit: the account keeps its plan RPS on each
 * process, never unlimited and never refused because our store is down). `onLease` reports
 * each lease's source (metrics, logs on a change).
 *
 * A store that was only slow answers the timed-out lease later; that answer is settled against
 * the fallback's grant, so a stall spends no tokens the fleet bucket did not give: the fleet's
 * tokens that nobody spends go back, and tokens the fallback gave beyond them are owed to it.
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
    } catch (error) {
      onLease('local');
      const answer = local.lease(
        request.accountId,
        request.needed,
        request.wanted,
        // Tokens given back came from the store or from here: either way, this bucket is the
        // only one reachable now, and it never holds more than one second of the rate.
        request.returned,
        request.ratePerSecond,
      );
      if (error instanceof StoreTimeoutError)
        settleLate(store, request, error.late as Promise<LeaseAnswer>, answer, now);
      return answer;
    }
  };
}

/**
 * When the lease that timed out is answered after all, gives the fleet bucket back what it
 * granted beyond the fallback's grant, or charges it what the fallback granted beyond its own
 * (a negative return: `takeUpTo`). A lease never answered (the connection dropped) stays what
 * the store being unreachable makes it: the per-process allowance.
 */
function settleLate(
  store: FleetLeaseStore,
  request: LeaseRequest,
  late: Promise<LeaseAnswer>,
  fallback: LeaseAnswer,
  now: () => number,
): void {
  late
    .then((fleet) => {
      const returned = (fleet.ok ? fleet.granted : 0) - (fallback.ok ? fallback.granted : 0);
      if (returned === 0) return;
      return store.lease(
        {
          accountId: request.accountId,
          ratePerSecond: request.ratePerSecond,
          needed: 0,
          wanted: 0,
          returned,
        },
        now(),
      );
    })
    .catch(() => undefined);
}

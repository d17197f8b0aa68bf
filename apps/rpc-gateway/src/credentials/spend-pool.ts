import type { FleetBucketStore } from '../limits/fleet-bucket-store';
import type { SpendPool } from './spend-estimate';

/**
 * The fleet's spend pools in the plan-RPS store (ADR 0201 amendment "The estimate across the
 * fleet"): the same Redis, key prefix, `takeUpTo` script, deadline and patience as ADR 0102's
 * leases. A pool is a bucket of rate 0 whose burst is the state's spendable CU: a missing key
 * starts full (the first process to lease seeds it), nothing refills it, a charge may take it
 * below zero, and it expires an hour after its last lease (a newer state has replaced it long
 * before, as any spend is published within seconds).
 */
export function fleetSpendPool(store: FleetBucketStore, now: () => number = Date.now): SpendPool {
  return {
    now,
    take: (accountId, version, seedCu, wantedCu, chargedCu) =>
      store.takeUpTo(
        `cu:${accountId}:${version}`,
        { needed: 0, wanted: wantedCu, returned: -chargedCu },
        0,
        seedCu,
        now(),
      ),
  };
}

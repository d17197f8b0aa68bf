import { Counter, type Registry } from 'prom-client';
import { StoreTimeoutError, type FleetBucketStore } from '../limits/fleet-bucket-store';
import type { LeaseAnswer } from '../limits/leased-rate-limiter';
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

/**
 * How a lease from a spend pool ended: `granted` all it asked; `empty` the pool had less (the
 * estimate is then spent until a newer state); `failed_open` the store did not answer in time
 * or at all (the process admits alone meanwhile); `late` an answer that came after its lease
 * had failed open (that lease is counted `failed_open` too).
 */
export type SpendLeaseOutcome = 'granted' | 'empty' | 'failed_open' | 'late';

/**
 * `pool` with the fleet's spend-pool metrics on `registry`, named and registered as the
 * plan-RPS store's (`rate_limit_*`, plan-limiter.ts): leases by outcome and the CU they granted
 * (late grants included). No account label: the outcome is the only one (bounded cardinality).
 */
export function meteredSpendPool(pool: SpendPool, registry: Registry): SpendPool {
  const leases = new Counter({
    name: 'spend_pool_leases_total',
    help: 'Leases from the fleet spend pools, by outcome (granted, empty, failed_open, late)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const leasedCu = new Counter({
    name: 'spend_pool_leased_cu_total',
    help: 'CU granted by leases from the fleet spend pools (late answers included)',
    registers: [registry],
  });
  for (const outcome of ['granted', 'empty', 'failed_open', 'late'] as const)
    leases.inc({ outcome }, 0);
  const count = (outcome: SpendLeaseOutcome, answer?: LeaseAnswer) => {
    leases.inc({ outcome });
    if (answer?.ok && answer.granted > 0) leasedCu.inc(answer.granted);
  };
  return {
    now: () => pool.now(),
    take: (accountId, version, seedCu, wantedCu, chargedCu) =>
      pool.take(accountId, version, seedCu, wantedCu, chargedCu).then(
        (answer) => {
          count(answer.ok && answer.granted >= wantedCu ? 'granted' : 'empty', answer);
          return answer;
        },
        (error: unknown) => {
          count('failed_open');
          if (error instanceof StoreTimeoutError)
            (error.late as Promise<LeaseAnswer>).then(
              (answer) => count('late', answer),
              () => undefined,
            );
          throw error;
        },
      ),
  };
}

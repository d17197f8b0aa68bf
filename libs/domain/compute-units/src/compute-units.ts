import { NETWORKS, type Network, type NetworkKey, type SpecLetter } from '@meridian/networks';

/** Spec "Billing": one webhook delivery attempt, successful or not. */
export const CU_PER_DELIVERY_ATTEMPT = 25;

/** COMPAT: R, P and E cost 20 per call; S costs 100. */
export const CHAIN_MULTIPLIER: Readonly<Record<SpecLetter, number>> = Object.freeze({
  R: 20,
  P: 20,
  E: 20,
  S: 100,
});

/** Archive endpoints keep every historical state, so each call there costs double. */
export const ARCHIVE_MULTIPLIER = 2;

/** Heavy methods (tracing, txpool); `debug_*` is matched by prefix. Everything else costs 1×. */
const HEAVY_METHODS: ReadonlyMap<string, number> = new Map([
  ['trace_call', 2],
  ['trace_transaction', 2],
  ['txpool_status', 2],
  ['trace_replayTransaction', 4],
]);

export function methodMultiplier(method: string): number {
  return HEAVY_METHODS.get(method) ?? (method.startsWith('debug_') ? 2 : 1);
}

export interface CuOptions {
  /** The call is served by an archive endpoint. */
  readonly archive?: boolean;
}

const specOf = (network: Network | NetworkKey): SpecLetter =>
  typeof network === 'string' ? NETWORKS[network].spec : network.spec;

/** CU of one node call: chain × method (× 2 on archive). Always a positive integer. */
export function cuForCall(
  network: Network | NetworkKey,
  method: string,
  options: CuOptions = {},
): number {
  return (
    CHAIN_MULTIPLIER[specOf(network)] *
    methodMultiplier(method) *
    (options.archive ? ARCHIVE_MULTIPLIER : 1)
  );
}

/**
 * CU of a batch: the sum of its calls. Pass the methods that were actually relayed; what the
 * gateway answers itself (invalid items, methods not offered) is not billed.
 */
export function cuForBatch(
  network: Network | NetworkKey,
  methods: Iterable<string>,
  options: CuOptions = {},
): number {
  const chain = CHAIN_MULTIPLIER[specOf(network)] * (options.archive ? ARCHIVE_MULTIPLIER : 1);
  let methodUnits = 0;
  for (const method of methods) methodUnits += methodMultiplier(method);
  return chain * methodUnits;
}

/** CU of `attempts` webhook delivery attempts (8 failing attempts = 200 CU). */
export function cuForDeliveryAttempts(attempts: number): number {
  if (!Number.isSafeInteger(attempts) || attempts < 0)
    throw new RangeError(`attempts must be a non-negative integer: ${attempts}`);
  return attempts * CU_PER_DELIVERY_ATTEMPT;
}

/**
 * CU an account can spend now from its two pools (ADR 0101): the plan allowance and purchased
 * CU, each counted only above zero (purchased CU in debt take nothing from the allowance). Zero
 * or less: the account is exhausted. The one rule billing-ledger's balance state, the gateway's
 * spend estimate (ADR 0201) and a webhook resume on a clearing top-up (ADR 0401) read.
 */
export function spendableCu(allowanceCu: number, purchasedCu: number): number {
  return Math.max(allowanceCu, 0) + Math.max(purchasedCu, 0);
}

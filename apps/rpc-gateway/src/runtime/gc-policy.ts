import { setFlagsFromString } from 'node:v8';

/**
 * The gateway's garbage-collection policy (ADR 0206). Its live heap is small (≈55 MB) and almost
 * all of its garbage dies young; what does reach the old generation (a few hundred bytes per
 * request until ADR 0207 removed their source, a few bytes since) is what schedules full
 * mark-compacts, each a 20–40 ms stall of every request in flight. With V8's default heap
 * growing that was one every few seconds under load. Letting the old generation grow to
 * `1 + percent/100` times the live heap makes full collections that much rarer; their cost
 * depends on the live heap, not on the garbage, so each one costs the same.
 *
 * V8 reads the factor at every full collection, so setting it once at start-up (before the
 * first one under load) holds for the process's life. Node refuses the flag in NODE_OPTIONS,
 * hence here; every process of a replica (primary and workers) runs it.
 */
export function applyGcPolicy(
  heapGrowingPercent: number,
  setFlags: (flags: string) => void = setFlagsFromString,
): void {
  if (heapGrowingPercent > 0) setFlags(`--heap-growing-percent=${heapGrowingPercent}`);
}

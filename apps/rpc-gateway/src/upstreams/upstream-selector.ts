/** What routing needs to know about one upstream node. */
export interface UpstreamStatus {
  readonly index: number;
  /** Last health check (or passive observation) succeeded. */
  readonly healthy: boolean;
  /** Latest block height seen; undefined before the first check. */
  readonly height: number | undefined;
  readonly inFlight: number;
}

export interface SelectOptions {
  exclude?: ReadonlySet<number>;
  /** The network's lag tolerance in blocks (`lagToleranceBlocks`). */
  maxLagBlocks: number;
  cursor: number;
  /** Whether the node's breaker lets an attempt through now; a node it refuses is never picked. */
  usable?: (index: number) => boolean;
}

/**
 * Picks the upstream for the next attempt (ADR 0202 amendment, "Heights"). Never a node whose
 * breaker is open. Among the rest: healthy nodes at the best height known of the pool's usable
 * healthy nodes; then healthy nodes within `maxLagBlocks` of it; then any healthy node; then
 * any node not yet tried (a failed health check alone is not proof: the breaker is). Within a
 * tier, least requests in flight first, ties round-robin from `cursor`.
 */
export function selectUpstream(
  upstreams: readonly UpstreamStatus[],
  options: SelectOptions,
): number | undefined {
  const usable = options.usable;
  let best = -Infinity;
  for (const u of upstreams)
    if (u.healthy && u.height !== undefined && u.height > best && (!usable || usable(u.index)))
      best = u.height;
  const candidates = upstreams.filter(
    (u) => !options.exclude?.has(u.index) && (!usable || usable(u.index)),
  );
  if (candidates.length === 0) return undefined;
  const lagOf = (u: UpstreamStatus) =>
    u.height === undefined || best === -Infinity ? 0 : best - u.height;
  const tiers = [
    (u: UpstreamStatus) => u.healthy && lagOf(u) <= 0,
    (u: UpstreamStatus) => u.healthy && lagOf(u) <= options.maxLagBlocks,
    (u: UpstreamStatus) => u.healthy,
    () => true,
  ];
  for (const inTier of tiers) {
    const tier = candidates.filter(inTier);
    if (tier.length === 0) continue;
    let chosen: UpstreamStatus | undefined;
    for (let k = 0; k < tier.length; k++) {
      const u = tier[(options.cursor + k) % tier.length]!;
      if (chosen === undefined || u.inFlight < chosen.inFlight) chosen = u;
    }
    return chosen!.index;
  }
  return undefined;
}

/**
 * A network's lag tolerance in blocks (ADR 0202 amendment, "Heights"): `maxLagMs` of its
 * blocks (checkpoints for S) at the network's block time, at least one; MAX_LAG_BLOCKS, when
 * set, for every network instead.
 */
export function lagToleranceBlocks(
  blockTimeMs: number,
  maxLagMs: number,
  maxLagBlocks: number | undefined,
): number {
  if (maxLagBlocks !== undefined) return maxLagBlocks;
  return Math.max(1, Math.ceil(maxLagMs / blockTimeMs));
}

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
  // It runs for every relayed call, so without a list per tier: one pass for the best height
  // and each tier's size, one for the pick within the first tier that has a node.
  const { exclude, usable, maxLagBlocks } = options;
  let best = -Infinity;
  for (const u of upstreams)
    if (u.healthy && u.height !== undefined && u.height > best && (!usable || usable(u.index)))
      best = u.height;
  const tierOf = (u: UpstreamStatus): number => {
    if (exclude?.has(u.index) || (usable && !usable(u.index))) return -1;
    if (!u.healthy) return 3;
    const lag = u.height === undefined || best === -Infinity ? 0 : best - u.height;
    return lag <= 0 ? 0 : lag <= maxLagBlocks ? 1 : 2;
  };
  const sizes = [0, 0, 0, 0];
  for (const u of upstreams) {
    const tier = tierOf(u);
    if (tier >= 0) sizes[tier]!++;
  }
  const tier = sizes.findIndex((size) => size > 0);
  if (tier === -1) return undefined;
  // Nodes of the tier in order at positions 0..n-1; least in flight wins, ties go to the first
  // in round-robin order from position cursor mod n.
  const n = sizes[tier]!;
  const start = options.cursor % n;
  let chosen: UpstreamStatus | undefined;
  let chosenRank = 0;
  let position = 0;
  for (const u of upstreams) {
    // Tiers 0..2 are healthy nodes by lag; a node is in tier t only, so membership is equality.
    if (tierOf(u) !== tier) continue;
    const rank = (position - start + n) % n;
    position++;
    if (
      chosen === undefined ||
      u.inFlight < chosen.inFlight ||
      (u.inFlight === chosen.inFlight && rank < chosenRank)
    ) {
      chosen = u;
      chosenRank = rank;
    }
  }
  return chosen!.index;
}

/**
 * A network's lag tolerance in blocks (ADR 0202 amendment, "Heights"): `maxLagMs` of its
 * blocks (checkpoints for S) at the network's block time, at least one; MAX_LAG_BLOCKS, when
 * set, for every network instead.
 */
export function lagToleranceBlocks(
  blockTimeMs: number,
  maxLagMs: number,
  maxLagBlocks?: number,
): number {
  if (maxLagBlocks !== undefined) return maxLagBlocks;
  return Math.max(1, Math.ceil(maxLagMs / blockTimeMs));
}

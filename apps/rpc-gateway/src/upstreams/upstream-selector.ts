/** What routing needs to know about one upstream node. */
export interface UpstreamStatus {
  readonly index: number;
  /** Last health check (or passive observation) succeeded. */
  readonly healthy: boolean;
  /** Latest block height seen; undefined before the first check. */
  readonly height: number | undefined;
  readonly inFlight: number;
}

/**
 * Picks the upstream for the next attempt: healthy and within `maxLagBlocks` of the best height
 * in the pool, least requests in flight first (ties → round-robin from `cursor`). When nothing
 * qualifies, a lagging healthy node, then any node not yet tried, is better than failing.
 */
export function selectUpstream(
  upstreams: readonly UpstreamStatus[],
  options: { exclude?: ReadonlySet<number>; maxLagBlocks: number; cursor: number },
): number | undefined {
  const candidates = upstreams.filter((u) => !options.exclude?.has(u.index));
  if (candidates.length === 0) return undefined;
  const best = Math.max(
    ...candidates.map((u) => (u.healthy && u.height !== undefined ? u.height : -Infinity)),
  );
  const inSync = (u: UpstreamStatus) =>
    u.height === undefined || best === -Infinity || best - u.height <= options.maxLagBlocks;
  const tiers = [
    candidates.filter((u) => u.healthy && inSync(u)),
    candidates.filter((u) => u.healthy),
    candidates,
  ];
  for (const tier of tiers) {
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

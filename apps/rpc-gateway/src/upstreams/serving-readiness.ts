/** Why an endpoint with no upstream for any network it offers is not ready (and its start line). */
export const NO_NETWORK_SERVED =
  'no network served: UPSTREAMS and SUI_UPSTREAM_URLS name no node for a network this endpoint offers';

/** What the readiness rule looks at: the HTTP edge and, per offered network, its upstreams. */
export interface ServingState {
  /** The HTTP server accepts connections. */
  listening: boolean;
  /** Shutdown has begun (answers carry `Connection: close`, usage is being flushed). */
  closing: boolean;
  networks: readonly { network: string; upstreams: number; healthy: number }[];
}

/**
 * The gateway's readiness (ADR 0212): can this process serve requests at all. Undefined while
 * it can; otherwise why not. One network without a healthy upstream does not count: every
 * replica of the region sees the same nodes, so taking the pods out for it would refuse every
 * other network too, and the network's own calls get -32000 either way. Only when no offered
 * network has a healthy node, which from one pod among healthy ones means its own egress or DNS
 * is broken, does it stop being ready. A network with no upstream configured is not offered;
 * an endpoint that offers none (UPSTREAMS and SUI_UPSTREAM_URLS unset, or naming only networks
 * it does not serve) serves nothing and is not ready either (deploy/README.md, "Operations":
 * ready is at least one network with a healthy node). NATS is not looked at (usage waits in
 * memory; `nats_connected` reports it).
 */
export function notServingReason(state: ServingState): string | undefined {
  if (state.closing) return 'shutting down';
  if (!state.listening) return 'HTTP edge not listening';
  const offered = state.networks.filter((n) => n.upstreams > 0);
  if (offered.length === 0) return NO_NETWORK_SERVED;
  if (!offered.some((n) => n.healthy > 0))
    return `no healthy upstream for any network (${offered.map((n) => n.network).join(', ')})`;
  return undefined;
}

import { startForwardingUpstream } from './forwarding-upstream';

interface Call {
  id: unknown;
  method: string;
  params?: unknown[];
}

/**
 * A FAKE upstream for a node that lags behind the chain it follows (restarted, catching up, or
 * the node a failover moved to): it forwards every call to a real node but answers as if that
 * node's head were `head`: `eth_blockNumber` says so and blocks above it do not exist yet.
 * `setHead(undefined)` lets it catch up. anvil alone cannot go back and return to the same
 * blocks (a revert and a re-mine make other hashes).
 */
export async function startLaggingUpstream(target: string): Promise<{
  url: string;
  setHead(head: number | undefined): void;
  close(): Promise<void>;
}> {
  let cap: number | undefined;
  const answer = (id: unknown, result: unknown) => JSON.stringify({ jsonrpc: '2.0', id, result });
  const upstream = await startForwardingUpstream(target, async (text, forward) => {
    const call = JSON.parse(text) as Call | Call[];
    if (cap === undefined || Array.isArray(call)) return undefined;
    if (call.method === 'eth_blockNumber') {
      const real = Number(JSON.parse(await forward(text)).result);
      return answer(call.id, `0x${Math.min(real, cap).toString(16)}`);
    }
    if (call.method !== 'eth_getBlockByNumber') return undefined;
    const [tag, full] = call.params as [string, boolean];
    if (tag === 'latest')
      return forward(JSON.stringify({ ...call, params: [`0x${cap.toString(16)}`, full] }));
    if (tag.startsWith('0x') && Number(tag) > cap) return answer(call.id, null);
    return undefined;
  });
  return {
    ...upstream,
    setHead: (head) => {
      cap = head;
    },
  };
}

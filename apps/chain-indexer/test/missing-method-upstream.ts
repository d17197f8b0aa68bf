import { startForwardingUpstream } from './forwarding-upstream';

/**
 * A FAKE upstream for the one case anvil cannot play: a node without eth_getBlockReceipts.
 * It forwards every call to a real node except that method, which it answers the way such a
 * node does (JSON-RPC -32601 "method not found"), and counts what it was asked.
 */
export async function startMissingMethodUpstream(
  target: string,
  missing = 'eth_getBlockReceipts',
): Promise<{ url: string; calls: Map<string, number>; close(): Promise<void> }> {
  const calls = new Map<string, number>();
  const upstream = await startForwardingUpstream(target, async (text) => {
    const body = JSON.parse(text) as
      { id: unknown; method: string } | Array<{ id: unknown; method: string }>;
    for (const call of Array.isArray(body) ? body : [body])
      calls.set(call.method, (calls.get(call.method) ?? 0) + 1);
    if (Array.isArray(body) || body.method !== missing) return undefined;
    return JSON.stringify({
      jsonrpc: '2.0',
      id: body.id,
      error: { code: -32601, message: `the method ${missing} does not exist/is not available` },
    });
  });
  return { ...upstream, calls };
}

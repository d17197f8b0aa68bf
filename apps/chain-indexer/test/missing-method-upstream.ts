import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

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
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const text = Buffer.concat(chunks).toString();
        const body = JSON.parse(text) as
          { id: unknown; method: string } | Array<{ id: unknown; method: string }>;
        for (const call of Array.isArray(body) ? body : [body])
          calls.set(call.method, (calls.get(call.method) ?? 0) + 1);
        if (!Array.isArray(body) && body.method === missing) {
          res.setHeader('content-type', 'application/json');
          res.end(
            JSON.stringify({
              jsonrpc: '2.0',
              id: body.id,
              error: {
                code: -32601,
                message: `the method ${missing} does not exist/is not available`,
              },
            }),
          );
          return;
        }
        const answer = await fetch(target, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: text,
        });
        res.setHeader('content-type', 'application/json');
        res.end(await answer.text());
      })().catch(() => {
        res.statusCode = 502;
        res.end();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    // close() alone waits for kept-alive connections, and a process that keeps polling (the
    // indexer) never lets its connection go idle: end them too, or close() can hang for good.
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

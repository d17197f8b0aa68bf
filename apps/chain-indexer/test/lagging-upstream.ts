import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

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
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const text = Buffer.concat(chunks).toString();
        const call = JSON.parse(text) as Call;
        res.setHeader('content-type', 'application/json');
        if (cap !== undefined && !Array.isArray(call)) {
          if (call.method === 'eth_blockNumber') {
            const real = Number(await forward(target, text).then((t) => JSON.parse(t).result));
            res.end(answer(call.id, `0x${Math.min(real, cap).toString(16)}`));
            return;
          }
          if (call.method === 'eth_getBlockByNumber') {
            const [tag, full] = call.params as [string, boolean];
            if (tag === 'latest') {
              const params = [`0x${cap.toString(16)}`, full];
              res.end(await forward(target, JSON.stringify({ ...call, params })));
              return;
            }
            if (tag.startsWith('0x') && Number(tag) > cap) {
              res.end(answer(call.id, null));
              return;
            }
          }
        }
        res.end(await forward(target, text));
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
    setHead: (head) => {
      cap = head;
    },
    // End kept-alive connections too: the polling indexer never lets its connection go idle.
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function forward(target: string, body: string): Promise<string> {
  const response = await fetch(target, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  return response.text();
}

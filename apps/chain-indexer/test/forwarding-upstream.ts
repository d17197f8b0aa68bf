import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The base of this folder's FAKE upstreams: a JSON-RPC server in front of a real node (anvil)
 * that forwards every request, except those `intercept` answers itself (it returns the answer's
 * text, or undefined to forward). A request that fails answers 502.
 */
export async function startForwardingUpstream(
  target: string,
  intercept: (
    text: string,
    forward: (body: string) => Promise<string>,
  ) => Promise<string | undefined>,
): Promise<{ url: string; close(): Promise<void> }> {
  const forward = async (body: string) =>
    (
      await fetch(target, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      })
    ).text();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const text = Buffer.concat(chunks).toString();
        const answer = (await intercept(text, forward)) ?? (await forward(text));
        res.setHeader('content-type', 'application/json');
        res.end(answer);
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
    // close() alone waits for kept-alive connections, and a process that keeps polling (the
    // indexer) never lets its connection go idle: end them too, or close() can hang for good.
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

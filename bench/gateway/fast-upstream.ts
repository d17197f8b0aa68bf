import { createServer } from 'node:net';
import { WebSocketServer } from 'ws';
import { MessageSplitter } from './http-wire';

/**
 * The benchmark's upstream node: answers every JSON-RPC call with canned results, at once by
 * default (the gateway, not the node, must be the bottleneck) or after SERVICE_TIME_MS (a real
 * node's own work per call, for the cache-hit comparison). HTTP is served on raw sockets
 * (http-wire.ts: a few µs per call, so the upstream takes little of the CPUs it shares with the
 * path under test); with a second port it also serves WebSocket there, pushing a newHeads
 * notification to every subscription every HEAD_INTERVAL_MS with the send time in `timestamp`
 * (ms), so subscribers can measure fan-out delay. Run as its own process:
 * `node -r @swc-node/register fast-upstream.ts <http port> [<ws port>]`.
 */
const port = Number(process.argv[2] ?? 0);
const wsPort = process.argv[3] === undefined ? undefined : Number(process.argv[3]);
const HEAD_INTERVAL_MS = Number(process.env['HEAD_INTERVAL_MS'] ?? 200);
const SERVICE_TIME_MS = Number(process.env['SERVICE_TIME_MS'] ?? 0);
const BLOCK = {
  number: '0x10',
  hash: `0x${'11'.repeat(32)}`,
  parentHash: `0x${'22'.repeat(32)}`,
  timestamp: '0x6553f100',
  transactions: [],
  gasUsed: '0x0',
  gasLimit: '0x1c9c380',
  miner: `0x${'00'.repeat(20)}`,
};

function answer(call: { id: unknown; method: string }): unknown {
  const result =
    call.method === 'eth_getBlockByHash' || call.method === 'eth_getBlockByNumber' ? BLOCK : '0x10';
  return { jsonrpc: '2.0', id: call.id, result };
}

const server = createServer((socket) => {
  socket.setNoDelay(true);
  const splitter = new MessageSplitter();
  socket.on('error', () => undefined);
  socket.on('data', (chunk: Buffer) =>
    splitter.push(chunk, ({ body }) => {
      let calls: { id: unknown; method: string } | { id: unknown; method: string }[];
      try {
        calls = JSON.parse(body.toString()) as typeof calls;
      } catch {
        socket.write('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n');
        return;
      }
      const out = JSON.stringify(Array.isArray(calls) ? calls.map(answer) : answer(calls));
      const response = `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(out)}\r\nKeep-Alive: timeout=60\r\n\r\n${out}`;
      // Equal delays fire in order, so pipelined answers keep their requests' order.
      if (SERVICE_TIME_MS > 0) setTimeout(() => socket.write(response), SERVICE_TIME_MS);
      else socket.write(response);
    }),
  );
});
let sub = 0;
function serveSubscriptions(onPort: number): void {
  new WebSocketServer({ host: '127.0.0.1', port: onPort }).on('connection', (ws) => {
    const timers: NodeJS.Timeout[] = [];
    ws.on('message', (data) => {
      const call = JSON.parse(data.toString()) as { id: number; method: string };
      if (call.method === 'eth_subscribe') {
        const id = `0x${(++sub).toString(16)}`;
        ws.send(JSON.stringify({ jsonrpc: '2.0', id: call.id, result: id }));
        timers.push(
          setInterval(
            () =>
              ws.send(
                JSON.stringify({
                  jsonrpc: '2.0',
                  method: 'eth_subscription',
                  params: { subscription: id, result: { ...BLOCK, timestamp: Date.now() } },
                }),
              ),
            HEAD_INTERVAL_MS,
          ),
        );
      } else ws.send(JSON.stringify(answer(call)));
    });
    ws.on('close', () => timers.forEach(clearInterval));
  });
}
if (wsPort !== undefined) serveSubscriptions(wsPort);
server.listen(port, '127.0.0.1', () =>
  process.stdout.write(`listening ${(server.address() as { port: number }).port}\n`),
);

import { createServer } from 'node:http';
import { WebSocketServer } from 'ws';

/**
 * The benchmark's upstream node: answers every JSON-RPC call with canned results, at once by
 * default (the gateway, not the node, must be the bottleneck) or after SERVICE_TIME_MS (a real
 * node's own work per call, for the cache-hit comparison), and pushes a newHeads notification to every
 * subscription every HEAD_INTERVAL_MS with the send time in `timestamp` (ms), so subscribers
 * can measure fan-out delay. Run as its own process: `node -r @swc-node/register fast-upstream.ts <port>`.
 */
const port = Number(process.argv[2] ?? 0);
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

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString()) as
      { id: unknown; method: string } | { id: unknown; method: string }[];
    const out = JSON.stringify(Array.isArray(body) ? body.map(answer) : answer(body));
    const send = () => {
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(out),
      });
      res.end(out);
    };
    if (SERVICE_TIME_MS > 0) setTimeout(send, SERVICE_TIME_MS);
    else send();
  });
});
server.keepAliveTimeout = 60_000;
const wss = new WebSocketServer({ server });
let sub = 0;
wss.on('connection', (ws) => {
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
server.listen(port, '127.0.0.1', () =>
  process.stdout.write(`listening ${(server.address() as { port: number }).port}\n`),
);

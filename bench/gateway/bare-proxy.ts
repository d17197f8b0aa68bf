import { createServer } from 'node:http';
import { Pool } from 'undici';

/**
 * Calibration only, not a product path: the least a Node process can do to relay a POST (node:http
 * server, undici pool to the upstream, no parsing, no checks, no logs, no metrics). Its
 * throughput is the ceiling of any single-process Node gateway on this machine, so the gateway's
 * ratio to it shows what the gateway's own work costs apart from the runtime's HTTP floor.
 * Run as its own process: `node -r @swc-node/register bare-proxy.ts <port> <upstream url>`.
 */
const port = Number(process.argv[2] ?? 0);
const target = new URL(process.argv[3] ?? 'http://127.0.0.1:8545/');
const pool = new Pool(target.origin, { connections: 128, pipelining: 1 });
const headers = { 'content-type': 'application/json' };

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const out: Buffer[] = [];
    let status = 502;
    pool.dispatch(
      { path: target.pathname, method: 'POST', headers, body: Buffer.concat(chunks) },
      {
        onRequestStart: () => undefined,
        onResponseStart: (_c, code) => {
          status = code;
        },
        onResponseData: (_c, chunk) => {
          out.push(chunk);
        },
        onResponseEnd: () => {
          const body = Buffer.concat(out);
          res.writeHead(status, {
            'content-type': 'application/json',
            'content-length': body.length,
          });
          res.end(body);
        },
        onResponseError: () => {
          res.writeHead(502).end();
        },
      },
    );
  });
});
server.keepAliveTimeout = 60_000;
server.listen(port, '127.0.0.1');

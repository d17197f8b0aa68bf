import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The local receiver of the delivery bench, in a process of its own (so neither the bench's
 * bare loop nor the worker shares its CPU): one server per loopback address 127.0.0.2… (one
 * destination host each, as customers' endpoints are), answering every POST 200 at once and
 * recording when it came and its `webhook-id`. Driven over IPC: `reset`, `report`. With a
 * second argument n > 0 each host answers every n-th request it gets 503 instead (the soak's
 * failing receiver; counted per host, so that no endpoint fails more often than that).
 */
export interface ReceiverReport {
  count: number;
  distinctIds: number;
  unsigned: number;
  /** Arrival times (ms since the epoch, fractional), in order. */
  times: number[];
  /** Requests answered 503 (every n-th of each host, with n given). */
  failed: number;
}

const hosts = Number(process.argv[2] ?? 32);
const failEvery = Number(process.argv[3] ?? 0);
let failed = 0;
let times: number[] = [];
let ids = new Set<string>();
let unsigned = 0;

function handle(req: IncomingMessage, res: ServerResponse, received: number): void {
  req.resume();
  req.on('end', () => {
    times.push(performance.timeOrigin + performance.now());
    const id = req.headers['webhook-id'];
    if (typeof id === 'string') ids.add(id);
    if (id !== undefined && !req.headers['webhook-signature']) unsigned += 1;
    if (failEvery > 0 && received % failEvery === 0) {
      failed += 1;
      res.writeHead(503, { 'content-type': 'text/plain' }).end('unavailable');
    } else res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
}

async function main(): Promise<void> {
  const urls: string[] = [];
  for (let i = 0; i < hosts; i += 1) {
    let received = 0;
    const server = createServer((req, res) => handle(req, res, ++received));
    server.keepAliveTimeout = 60_000;
    const address = `127.0.0.${i + 2}`;
    await new Promise<void>((resolve) => server.listen(0, address, resolve));
    urls.push(`http://${address}:${(server.address() as AddressInfo).port}/hooks/${i}`);
  }
  process.on('message', (message: string) => {
    if (message === 'reset') {
      times = [];
      ids = new Set();
      unsigned = 0;
      failed = 0;
      process.send?.({ reset: true });
    } else if (message === 'report') {
      const report: ReceiverReport = {
        count: times.length,
        distinctIds: ids.size,
        unsigned,
        times,
        failed,
      };
      process.send?.({ report });
    }
  });
  process.on('disconnect', () => process.exit(0));
  process.send?.({ urls });
}

void main();

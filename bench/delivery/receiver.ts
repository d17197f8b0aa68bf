import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The local receiver of the delivery bench, in a process of its own (so neither the bench's
 * bare loop nor the worker shares its CPU): one server per loopback address 127.0.0.2… (one
 * destination host each, as customers' endpoints are), answering every POST 200 at once and
 * recording when it came and its `webhook-id`. Driven over IPC: `reset`, `report`.
 */
export interface ReceiverReport {
  count: number;
  distinctIds: number;
  unsigned: number;
  /** Arrival times (ms since the epoch, fractional), in order. */
  times: number[];
}

const hosts = Number(process.argv[2] ?? 32);
let times: number[] = [];
let ids = new Set<string>();
let unsigned = 0;

function handle(req: IncomingMessage, res: ServerResponse): void {
  req.resume();
  req.on('end', () => {
    times.push(performance.timeOrigin + performance.now());
    const id = req.headers['webhook-id'];
    if (typeof id === 'string') ids.add(id);
    if (id !== undefined && !req.headers['webhook-signature']) unsigned += 1;
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
}

async function main(): Promise<void> {
  const urls: string[] = [];
  for (let i = 0; i < hosts; i += 1) {
    const server = createServer(handle);
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
      process.send?.({ reset: true });
    } else if (message === 'report') {
      const report: ReceiverReport = {
        count: times.length,
        distinctIds: ids.size,
        unsigned,
        times,
      };
      process.send?.({ report });
    }
  });
  process.on('disconnect', () => process.exit(0));
  process.send?.({ urls });
}

void main();

import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { freePort } from './free-port';

const listen = (port: number) =>
  new Promise<void>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => server.close(() => resolve()));
  });

describe('freePort', () => {
  it('hands out distinct bindable ports, below the range the kernel gives outgoing connections', async () => {
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    expect(new Set(ports).size).toBe(ports.length);
    for (const port of ports) await listen(port);
    const range = (() => {
      try {
        return readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8');
      } catch {
        return undefined;
      }
    })();
    if (range !== undefined) {
      const low = Number(range.trim().split(/\s+/)[0]);
      for (const port of ports) expect(port).toBeLessThan(low);
    }
  });
});

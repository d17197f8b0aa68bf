import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** The lowest port the kernel hands out for outgoing connections (Linux), else undefined. */
function ephemeralStart(): number | undefined {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/);
    const port = Number(low);
    return Number.isInteger(port) && port > 11_000 ? port : undefined;
  } catch {
    return undefined;
  }
}

const EPHEMERAL_START = ephemeralStart();
/** Ports this process handed out already (two callers never get the same one). */
const handedOut = new Set<number>();

function tryListen(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const bound = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(bound > 0 ? bound : undefined));
    });
  });
}

/**
 * A TCP port that was free on 127.0.0.1 a moment ago. Another process may take it before the
 * caller binds; callers that start servers retry on "address in use" (startAnvil does).
 *
 * Where the kernel's range for outgoing connections is known (Linux), the port is picked below
 * it, at random: a port the kernel assigned (`listen(0)`) comes from that range, and a stack's
 * own outgoing connections (to Postgres, NATS, …) could take it as their local port before the
 * app meant for it binds, for as long as the connection lives (seen: an audit-api of the faults
 * stack restarting on EADDRINUSE until its readiness timed out).
 */
export async function freePort(): Promise<number> {
  if (EPHEMERAL_START !== undefined) {
    const low = 10_000;
    for (let attempt = 0; attempt < 50; attempt++) {
      const port = low + Math.floor(Math.random() * (EPHEMERAL_START - low));
      if (handedOut.has(port)) continue;
      handedOut.add(port); // reserved before the bind: a concurrent call picks another
      if ((await tryListen(port)) === port) return port;
      handedOut.delete(port);
    }
  }
  const port = await tryListen(0);
  if (port === undefined) throw new Error('no port assigned');
  return port;
}

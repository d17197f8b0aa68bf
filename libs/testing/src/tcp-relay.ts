import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface CuttableTcpRelay {
  /** The relay's port on 127.0.0.1 (the same across `cut` and `restore`). */
  readonly port: number;
  /** Destroys every open connection and refuses new ones, as when the server goes away. */
  cut(): Promise<void>;
  /** Listens again on the same port and relays new connections as before. */
  restore(): Promise<void>;
  /** Same as `cut`, for the end of a test. */
  close(): Promise<void>;
}

/**
 * A TCP relay to a real server (`127.0.0.1:<targetPort>`, e.g. the machine's NATS) that a test
 * can cut and restore: the app under test loses its server while the server itself, and the
 * other tests using it, carry on. What the server stored meanwhile is there when it comes back.
 */
export async function startCuttableTcpRelay(targetPort: number): Promise<CuttableTcpRelay> {
  const sockets = new Set<Socket>();
  const relay = (client: Socket) => {
    const upstream = connect(targetPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    client.pipe(upstream).pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  };
  let server: Server | undefined;
  const listen = async (port: number): Promise<number> => {
    const next = createServer(relay);
    await new Promise<void>((resolve, reject) => {
      next.once('error', reject);
      next.listen(port, '127.0.0.1', () => resolve());
    });
    server = next;
    return (next.address() as AddressInfo).port;
  };
  const cut = async (): Promise<void> => {
    const open = server;
    server = undefined;
    if (!open) return;
    const closed = new Promise<void>((resolve) => open.close(() => resolve()));
    for (const socket of sockets) socket.destroy();
    sockets.clear();
    await closed;
  };
  const port = await listen(0);
  return {
    port,
    cut,
    restore: async () => {
      if (!server) await listen(port);
    },
    close: cut,
  };
}

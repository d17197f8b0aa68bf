import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface CuttableTcpRelay {
  /** The relay's port on 127.0.0.1 (the same across `cut` and `restore`). */
  readonly port: number;
  /** Destroys every open connection and refuses new ones, as when the server goes away. */
  cut(): Promise<void>;
  /**
   * Keeps every connection open but passes nothing either way, and holds new ones without
   * connecting them: a blackholed server (no close, no data), which `cut` is not.
   */
  blackhole(): void;
  /** Listens again on the same port and relays new connections as before (after a blackhole,
   * the held connections are closed first). */
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
  const pairs = new Set<[Socket, Socket]>();
  let holding = false;
  const relay = (client: Socket) => {
    if (holding) {
      sockets.add(client);
      client.on('error', () => client.destroy()).on('close', () => sockets.delete(client));
      return;
    }
    const upstream = connect(targetPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    client.pipe(upstream).pipe(client);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
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
    holding = false;
    await closed;
  };
  const blackhole = (): void => {
    holding = true;
    for (const [client, upstream] of pairs) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      client.pause();
      upstream.pause();
    }
  };
  const port = await listen(0);
  return {
    port,
    cut,
    blackhole,
    restore: async () => {
      if (holding) await cut();
      if (!server) await listen(port);
    },
    close: cut,
  };
}

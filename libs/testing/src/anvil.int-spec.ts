import { createServer, type Socket } from 'node:net';
import WebSocket from 'ws';
import { anvilBinaryPath } from '@meridian/platform-anvil';
import { startAnvil, type AnvilInstance } from './anvil';
import { freePort } from './free-port';

async function rpc(url: string, method: string, params: unknown[] = []): Promise<unknown> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return ((await response.json()) as { result: unknown }).result;
}

function wsRpc(url: string, method: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url);
    socket.once('error', reject);
    socket.once('open', () =>
      socket.send(JSON.stringify({ jsonrpc: '2.0', id: 7, method, params: [] })),
    );
    socket.once('message', (data) => {
      socket.close();
      resolve((JSON.parse(data.toString()) as { result: unknown }).result);
    });
  });
}

describe('freePort', () => {
  it('returns a port that can be bound', async () => {
    const port = await freePort();
    expect(port).toBeGreaterThan(0);
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
    await new Promise((resolve) => server.close(resolve));
  });
});

describe('startAnvil', () => {
  const started: AnvilInstance[] = [];
  afterAll(async () => {
    await Promise.all(started.map((node) => node.stop()));
  });

  it('resolves the binary from node_modules', () => {
    expect(anvilBinaryPath()).toMatch(/node_modules[\\/]@foundry-rs[\\/]anvil/);
  });

  it('starts devnets with the requested chain ids on distinct free ports (HTTP and WebSocket)', async () => {
    const [r, p] = await Promise.all([startAnvil({ chainId: 204 }), startAnvil({ chainId: 137 })]);
    started.push(r, p);
    expect(r.port).not.toBe(p.port);
    expect(await rpc(r.url, 'eth_chainId')).toBe('0xcc');
    expect(await rpc(p.url, 'eth_chainId')).toBe('0x89');
    expect(await rpc(r.url, 'net_version')).toBe('204');
    expect(await wsRpc(r.wsUrl, 'eth_chainId')).toBe('0xcc');
    expect(r.url).toBe(`http://127.0.0.1:${r.port}`);
  });

  it('honours an explicit port and a block time', async () => {
    const port = await freePort();
    const node = await startAnvil({ chainId: 1, port, blockTime: 1 });
    started.push(node);
    expect(node.port).toBe(port);
    const first = BigInt((await rpc(node.url, 'eth_blockNumber')) as string);
    await new Promise((resolve) => setTimeout(resolve, 2_200));
    const later = BigInt((await rpc(node.url, 'eth_blockNumber')) as string);
    expect(later).toBeGreaterThan(first);
  });

  it('stop() frees the port and can be called twice', async () => {
    const node = await startAnvil({ chainId: 560048 });
    await node.stop();
    await node.stop();
    await expect(rpc(node.url, 'eth_chainId')).rejects.toThrow();
  });

  it('fails clearly when the requested port is taken', async () => {
    const sockets = new Set<Socket>();
    const server = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
    });
    const port = await new Promise<number>((resolve) => {
      server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port));
    });
    try {
      await expect(startAnvil({ chainId: 1, port, readyTimeoutMs: 10_000 })).rejects.toThrow(
        `anvil could not bind port ${port}`,
      );
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

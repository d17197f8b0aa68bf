import { createServer } from 'node:net';

/**
 * A TCP port that was free on 127.0.0.1 a moment ago. Another process may take it before the
 * caller binds; callers that start servers retry on "address in use" (startAnvil does).
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('no port assigned'))));
    });
  });
}

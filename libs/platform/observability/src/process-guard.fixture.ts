// A process with the guard installed and one HTTP route per way a request can go wrong:
// process-guard.spec.ts starts it, breaks it, and checks that it still answers.
import { createServer } from 'node:http';
import pino from 'pino';
import { enterRequest, installProcessGuard } from './process-guard';

const logger = pino({ base: { service: 'guard-fixture' } });
installProcessGuard(logger);
const server = createServer((req, res) => {
  enterRequest(String(req.headers['x-request-id'] ?? 'none'));
  if (req.url === '/reject') void Promise.reject(new Error('rejected and not handled'));
  if (req.url === '/throw')
    setImmediate(() => {
      throw new Error('thrown outside any handler');
    });
  res.end('ok');
});
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  process.stdout.write(`${JSON.stringify({ listening: port })}\n`);
});

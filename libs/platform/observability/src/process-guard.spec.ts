import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import pino from 'pino';
import { enterRequest, installProcessGuard } from './process-guard';

const ROOT = join(__dirname, '..', '..', '..', '..');

describe('installProcessGuard', () => {
  const capture = () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino(
      { base: undefined },
      { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
    );
    return { logger, lines };
  };

  it('logs an unhandled rejection and an uncaught exception with the id of the request whose work failed', async () => {
    const { logger, lines } = capture();
    const target = new EventEmitter();
    const uninstall = installProcessGuard(logger, target);
    // As node calls the handlers: in the async context of the failed promise or callback.
    await Promise.resolve().then(() => {
      enterRequest('req-1');
      target.emit('unhandledRejection', new Error('a'));
    });
    await new Promise<void>((resolve) =>
      setImmediate(() => {
        enterRequest('req-2');
        setImmediate(() => {
          target.emit('uncaughtException', new Error('b'));
          resolve();
        });
      }),
    );
    target.emit('unhandledRejection', 'not even an error');
    expect(lines).toEqual([
      expect.objectContaining({ level: 50, request_id: 'req-1', event: 'unhandledRejection' }),
      expect.objectContaining({ level: 50, request_id: 'req-2', event: 'uncaughtException' }),
      expect.objectContaining({ level: 50, event: 'unhandledRejection', err: 'not even an error' }),
    ]);
    expect(lines[2]!['request_id']).toBeUndefined();
    uninstall();
    expect(target.listenerCount('unhandledRejection')).toBe(0);
    expect(target.listenerCount('uncaughtException')).toBe(0);
  });

  /** Starts a fixture process; resolves with its port once it prints `{"listening": port}`. */
  async function startFixture(path: string) {
    const child = spawn(process.execPath, ['-r', '@swc-node/register', path], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: Record<string, unknown>[] = [];
    let buffered = '';
    const port = await new Promise<number>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`fixture exited (${code})`)));
      child.stdout!.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        let at: number;
        while ((at = buffered.indexOf('\n')) >= 0) {
          const line = JSON.parse(buffered.slice(0, at)) as Record<string, unknown>;
          buffered = buffered.slice(at + 1);
          lines.push(line);
          if (typeof line['listening'] === 'number') resolve(line['listening']);
        }
      });
    });
    const guardLines = async (count: number) => {
      for (let i = 0; i < 100 && lines.filter((l) => l['event']).length < count; i++)
        await new Promise((r) => setTimeout(r, 20));
      return lines.filter((l) => l['event']);
    };
    return { child, port, guardLines };
  }

  it('a real process keeps serving after a request rejects unhandled and another throws', async () => {
    const { child, port, guardLines } = await startFixture(
      join(__dirname, 'process-guard.fixture.ts'),
    );
    try {
      const get = (path: string, requestId: string) =>
        fetch(`http://127.0.0.1:${port}${path}`, { headers: { 'x-request-id': requestId } }).then(
          (r) => r.text(),
        );
      expect(await get('/reject', 'req-reject')).toBe('ok');
      expect(await get('/throw', 'req-throw')).toBe('ok');
      const logged = await guardLines(2);
      expect(await get('/', 'req-after')).toBe('ok');
      expect(child.exitCode).toBeNull();
      expect(logged).toEqual([
        expect.objectContaining({ event: 'unhandledRejection', request_id: 'req-reject' }),
        expect.objectContaining({ event: 'uncaughtException', request_id: 'req-throw' }),
      ]);
    } finally {
      child.kill('SIGKILL');
    }
  }, 30_000);

  it('a real app (createHttpApp) whose handlers fail asynchronously logs their request ids and keeps serving', async () => {
    const { child, port, guardLines } = await startFixture(
      join(ROOT, 'libs/platform/http/src/guarded-app.fixture.ts'),
    );
    try {
      // A body that arrives in two parts, over one keep-alive connection for every request.
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      const call = (method: string, path: string, requestId: string, body?: string) =>
        new Promise<{ status: number; text: string }>((resolve, reject) => {
          const req = request(
            {
              host: '127.0.0.1',
              port,
              method,
              path,
              agent,
              headers: {
                'x-request-id': requestId,
                ...(body
                  ? {
                      'content-type': 'application/json',
                      'content-length': Buffer.byteLength(body),
                    }
                  : {}),
              },
            },
            (res) => {
              let text = '';
              res.on('data', (chunk: Buffer) => (text += chunk.toString()));
              res.on('end', () => resolve({ status: res.statusCode!, text }));
            },
          );
          req.on('error', reject);
          if (body === undefined) return void req.end();
          req.write(body.slice(0, 5));
          setTimeout(() => req.end(body.slice(5)), 30);
        });
      expect(
        (await call('POST', '/boom/reject', 'req-reject', '{"a":"body in parts"}')).status,
      ).toBe(200);
      expect((await call('POST', '/boom/throw', 'req-throw', '{}')).status).toBe(200);
      const logged = await guardLines(2);
      expect(await call('GET', '/boom/ok', 'req-after')).toEqual({
        status: 200,
        text: '{"ok":true}',
      });
      agent.destroy();
      expect(child.exitCode).toBeNull();
      expect(logged).toEqual([
        expect.objectContaining({
          event: 'unhandledRejection',
          request_id: 'req-reject',
          level: 50,
        }),
        expect.objectContaining({ event: 'uncaughtException', request_id: 'req-throw', level: 50 }),
      ]);
    } finally {
      child.kill('SIGKILL');
    }
  }, 60_000);
});

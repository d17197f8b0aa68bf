import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { join } from 'node:path';
import pino from 'pino';
import { installProcessGuard, requestIdOfError, tagRequestId } from './process-guard';

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

  it('logs an unhandled rejection and an uncaught exception with the request id they carry', () => {
    const { logger, lines } = capture();
    const target = new EventEmitter();
    const uninstall = installProcessGuard(logger, target);
    target.emit('unhandledRejection', tagRequestId(new Error('a'), 'req-1'));
    target.emit(
      'uncaughtException',
      new Error('b', { cause: tagRequestId(new Error('inner'), 'req-2') }),
    );
    target.emit('unhandledRejection', 'not even an error');
    expect(lines).toEqual([
      expect.objectContaining({ level: 50, request_id: 'req-1', event: 'unhandledRejection' }),
      expect.objectContaining({ level: 50, request_id: 'req-2', event: 'uncaughtException' }),
      expect.objectContaining({ level: 50, event: 'unhandledRejection', err: 'not even an error' }),
    ]);
    uninstall();
    expect(target.listenerCount('unhandledRejection')).toBe(0);
    expect(target.listenerCount('uncaughtException')).toBe(0);
  });

  it('finds a request id through causes, and none on untagged values', () => {
    expect(requestIdOfError(new Error('x', { cause: tagRequestId(new Error('y'), 'r') }))).toBe(
      'r',
    );
    expect(requestIdOfError(new Error('x'))).toBeUndefined();
    expect(requestIdOfError(null)).toBeUndefined();
    expect(tagRequestId('text', 'r')).toBe('text');
  });

  it('a real process keeps serving after a request rejects unhandled and another throws', async () => {
    const child = spawn(
      process.execPath,
      ['-r', '@swc-node/register', join(__dirname, 'process-guard.fixture.ts')],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
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
    try {
      const get = (path: string, requestId: string) =>
        fetch(`http://127.0.0.1:${port}${path}`, { headers: { 'x-request-id': requestId } }).then(
          (r) => r.text(),
        );
      expect(await get('/reject', 'req-reject')).toBe('ok');
      expect(await get('/throw', 'req-throw')).toBe('ok');
      for (let i = 0; i < 50 && lines.filter((l) => l['event']).length < 2; i++)
        await new Promise((r) => setTimeout(r, 20));
      expect(await get('/', 'req-after')).toBe('ok');
      expect(child.exitCode).toBeNull();
      expect(lines.filter((l) => l['event'])).toEqual([
        expect.objectContaining({ event: 'unhandledRejection', request_id: 'req-reject' }),
        expect.objectContaining({ event: 'uncaughtException', request_id: 'req-throw' }),
      ]);
    } finally {
      child.kill('SIGKILL');
    }
  }, 30_000);
});

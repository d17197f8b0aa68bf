import { createServer, request, Agent, type Server } from 'node:http';
import { connect } from 'node:net';
import pino from 'pino';
import { Registry } from 'prom-client';
import { GatewayMetrics } from '../observability/gateway-metrics';
import { RequestLog } from '../observability/request-log';
import { attachHotPath } from './relay.route';
import type { RelayService } from './relay.service';

/**
 * The relay route names the request whose work failed (ADR 0210: the gateway carries no
 * AsyncLocalStorage, so the route catches its relay's failure itself): logged with the request
 * id and answered 500, from a body that arrives in parts, request after request on one
 * keep-alive connection. A body over the limit is answered 413 without losing the answer.
 */
describe('relay route: failures named by their request', () => {
  let server: Server;
  let port: number;
  const logged: Array<{ request_id?: string; msg?: string; err?: { message?: string } }> = [];

  beforeAll(async () => {
    server = createServer();
    const relay = {
      handleHttp: async (_token: string, body: string) => {
        await new Promise((resolve) => setTimeout(resolve, 1));
        if (body.includes('"fail"')) throw new Error('relay broke');
        return { body: '{"jsonrpc":"2.0","id":1,"result":"0x1"}', deprecated: false };
      },
    } as unknown as RelayService;
    const logger = pino(
      { level: 'error' },
      { write: (line: string) => void logged.push(JSON.parse(line)) },
    );
    attachHotPath(
      server,
      relay,
      new GatewayMetrics(new Registry()),
      new RequestLog(logger, false),
      logger,
      { bodyLimitBytes: 1024 },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('logs a failed relay with its request id and answers 500, body in parts, over one connection', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const post = (requestId: string, method = 'fail') =>
      new Promise<number>((resolve, reject) => {
        const body = `{"jsonrpc":"2.0","id":1,"method":"${method}","params":[]}`;
        const req = request(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: `/${'a'.repeat(32)}/`,
            agent,
            headers: { 'x-request-id': requestId, 'content-length': body.length },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode!));
          },
        );
        req.on('error', reject);
        req.write(body.slice(0, 10));
        setTimeout(() => req.end(body.slice(10)), 10);
      });
    expect(await post('relay-1')).toBe(500);
    expect(await post('relay-ok', 'eth_chainId')).toBe(200);
    expect(await post('relay-2')).toBe(500);
    agent.destroy();
    expect(logged.map((l) => [l.request_id, l.msg, l.err?.message])).toEqual([
      ['relay-1', 'request failed', 'relay broke'],
      ['relay-2', 'request failed', 'relay broke'],
    ]);
  });

  it('answers 413 before the body is read without closing: the rest is drained, the connection serves on', async () => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    let failed: Error | undefined;
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
    socket.on('error', (error) => (failed = error));
    const until = async (condition: () => boolean) => {
      for (let i = 0; i < 200 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
    };
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    const length = 2 * 1024 * 1024;
    socket.write(
      `POST /${'a'.repeat(32)}/ HTTP/1.1\r\nhost: x\r\ncontent-length: ${length}\r\n\r\n`,
    );
    socket.write(Buffer.alloc(64 * 1024, 0x20));
    await until(() => text.includes('-32005'));
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(text.toLowerCase()).toContain('access-control-allow-origin: *');
    expect(text.toLowerCase()).not.toContain('connection: close');
    await new Promise<void>((resolve) =>
      socket.write(Buffer.alloc(length - 64 * 1024, 0x20), () => resolve()),
    );
    const answered = text.length;
    const body = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}';
    socket.write(
      `POST /${'a'.repeat(32)}/ HTTP/1.1\r\nhost: x\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
    );
    await until(() => text.slice(answered).includes('"result"'));
    socket.destroy();
    expect(failed).toBeUndefined();
    expect(text.slice(answered)).toMatch(/^HTTP\/1\.1 200 /);
  });

  it('a body in a coding the edge does not read → 415 listing the codings it reads (RFC 9110 §12.5.3)', async () => {
    const answer = await new Promise<{ status: number; headers: Record<string, unknown> }>(
      (resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: `/${'a'.repeat(32)}/`,
            headers: { 'content-encoding': 'zstd' },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers }));
          },
        );
        req.on('error', reject);
        req.end('{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}');
      },
    );
    expect(answer.status).toBe(415);
    expect(answer.headers['accept-encoding']).toBe('gzip, deflate, br');
  });

  it('no other answer carries Accept-Encoding', async () => {
    const headers = await new Promise<Record<string, unknown>>((resolve) => {
      const req = request(
        { host: '127.0.0.1', port, method: 'POST', path: `/${'a'.repeat(32)}/` },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.headers));
        },
      );
      req.end('{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}');
    });
    expect(headers['accept-encoding']).toBeUndefined();
  });

  describe('CORS: browser dApps may call the endpoint from any origin', () => {
    const exchange = (method: string, path: string, headers: Record<string, string> = {}) =>
      new Promise<{ status: number; headers: Record<string, unknown> }>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers }));
        });
        req.on('error', reject);
        req.end(method === 'POST' ? '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}' : undefined);
      });
    const token = `/${'a'.repeat(32)}`;

    it('a preflight on the token path → 204, any origin, POST, the asked headers echoed, max age', async () => {
      const answer = await exchange('OPTIONS', `${token}/`, {
        origin: 'https://dapp.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, x-custom-header',
      });
      expect(answer.status).toBe(204);
      expect(answer.headers).toMatchObject({
        'access-control-allow-origin': '*',
        'access-control-allow-methods': 'POST, OPTIONS',
        'access-control-allow-headers': 'content-type, x-custom-header',
        'access-control-max-age': '86400',
      });
      expect(answer.headers['access-control-allow-credentials']).toBeUndefined();
    });

    it('a preflight without (or with garbled) asked headers allows content-type', async () => {
      expect((await exchange('OPTIONS', token)).headers['access-control-allow-headers']).toBe(
        'content-type',
      );
      const garbled = await exchange('OPTIONS', token, {
        'access-control-request-headers': 'content-type, <script>',
      });
      expect(garbled.headers['access-control-allow-headers']).toBe('content-type');
    });

    it('every POST answer carries the origin header: 200 and 500 alike', async () => {
      const ok = await exchange('POST', token, { origin: 'https://dapp.example' });
      expect(ok.status).toBe(200);
      expect(ok.headers['access-control-allow-origin']).toBe('*');
      expect(ok.headers['access-control-expose-headers']).toBe(
        'x-request-id, retry-after, deprecation',
      );
      const failed = await new Promise<Record<string, unknown>>((resolve) => {
        const req = request({ host: '127.0.0.1', port, method: 'POST', path: token }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.headers));
        });
        req.end('{"jsonrpc":"2.0","id":1,"method":"fail"}');
      });
      expect(failed['access-control-allow-origin']).toBe('*');
    });
  });
});

/**
 * Every refused request leaves its one request line (README "Request log"): a body refused
 * before it is read (413 too large, 415 a coding the edge does not read) left none. Its line
 * says no calls were read and names the token's network and account as the relay finds them.
 */
describe('relay route: a body refused unread leaves its request line', () => {
  let server: Server;
  let port: number;
  const lines: Array<Record<string, unknown>> = [];
  const asked: string[] = [];

  beforeAll(async () => {
    server = createServer();
    const relay = {
      unreadRequest: (token: string) => {
        asked.push(token);
        return Promise.resolve({
          network: 'eth-mainnet',
          account: 'acct-1',
          calls: 0,
          billedCalls: 0,
          cu: 0,
        });
      },
    } as unknown as RelayService;
    const logger = pino({ level: 'info' });
    attachHotPath(
      server,
      relay,
      new GatewayMetrics(new Registry()),
      new RequestLog(logger, true, {
        write: (chunk: string) => {
          for (const line of chunk.trim().split('\n'))
            lines.push(JSON.parse(line) as Record<string, unknown>);
        },
      }),
      logger,
      { bodyLimitBytes: 1024 },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  const post = (requestId: string, body: string, headers: Record<string, string> = {}) =>
    new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/tok%2Dunread/',
          headers: Object.assign({ 'x-request-id': requestId }, headers),
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode!));
        },
      );
      req.on('error', reject);
      req.end(body);
    });

  it('413 and 415: one line each, its status, no calls, the token looked up for it', async () => {
    expect(await post('too-large', ' '.repeat(4096))).toBe(413);
    expect(await post('zstd', '{}', { 'content-encoding': 'zstd' })).toBe(415);
    for (let i = 0; i < 100 && lines.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    expect(lines).toEqual([
      expect.objectContaining({
        msg: 'rpc request',
        request_id: 'too-large',
        status: 413,
        network: 'eth-mainnet',
        account: 'acct-1',
        calls: 0,
        billed_calls: 0,
        cu: 0,
      }),
      expect.objectContaining({ request_id: 'zstd', status: 415, calls: 0 }),
    ]);
    expect(asked).toEqual(['tok-unread', 'tok-unread']);
  });
});

import 'reflect-metadata';
import { Body, Controller, Get, HttpCode, Module, Param, Post } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import pino from 'pino';
import { createHttpApp, MAX_REQUESTS_AWAITING_ANSWERS } from './create-http-app';

@Controller('things')
class ThingsController {
  @Post()
  create(@Body() body: unknown) {
    return { body: body ?? null };
  }

  @Get(':id')
  get(@Param('id') id: string) {
    return { id };
  }

  @Post(':id/roll')
  @HttpCode(200)
  roll(@Param('id') id: string) {
    return { rolled: id };
  }
}

/** A large answer, counted: what a pipelined burst makes the app do. */
const bigAnswers = { handled: 0 };
@Controller('big')
class BigController {
  @Get()
  big() {
    bigAnswers.handled += 1;
    return { data: 'x'.repeat(256 * 1024) };
  }
}

@Module({ controllers: [ThingsController, BigController] })
class ThingsModule {}

/**
 * The HTTP edge every REST app shares: the framework's own answers come in the same body as
 * ours ({"error", "message", "request_id"}), bodies are JSON only, and text Postgres cannot keep
 * (U+0000) is refused before any handler. Each case is a defect the fuzz suite found.
 */
describe('createHttpApp edge', () => {
  let app: NestFastifyApplication;
  const routes: unknown[] = [];

  beforeAll(async () => {
    const logger = pino(
      { level: 'info' },
      { write: (line: string) => void routes.push(JSON.parse(line)) },
    );
    app = await createHttpApp(ThingsModule, { logger, bodyLimitBytes: 1024 });
    await app.init();
    await app.getHttpAdapter().getInstance().ready();
  });
  afterAll(() => app.close());

  const send = async (options: {
    method: 'GET' | 'POST' | 'PATCH' | 'PUT';
    url: string;
    type?: string;
    payload?: string | Buffer;
  }) => {
    const response = await app.inject({
      method: options.method,
      url: options.url,
      headers: options.type ? { 'content-type': options.type } : {},
      ...(options.payload === undefined ? {} : { payload: options.payload }),
    });
    return {
      status: response.statusCode,
      body: response.json() as Record<string, unknown>,
      requestId: response.headers['x-request-id'],
    };
  };

  it('an action route takes content-type application/json with an empty body', async () => {
    const answer = await send({
      method: 'POST',
      url: '/things/a1/roll',
      type: 'application/json',
      payload: '',
    });
    expect(answer).toMatchObject({ status: 200, body: { rolled: 'a1' } });
    const noPayload = await send({
      method: 'POST',
      url: '/things/a1/roll',
      type: 'application/json',
    });
    expect(noPayload.status).toBe(200);
  });

  it.each([
    [
      'a malformed percent-encoding in the path',
      { method: 'GET', url: '/things/%E0%A4%A' },
      400,
      'invalid_url',
    ],
    ['%00 in a path parameter', { method: 'GET', url: '/things/a%00b' }, 400, 'invalid_request'],
    ['%00 in the query string', { method: 'GET', url: '/things/a?x=%00' }, 400, 'invalid_request'],
    [
      'an escaped NUL in a JSON string',
      { method: 'POST', url: '/things', type: 'application/json', payload: '{"name":"a\\u0000"}' },
      400,
      'malformed_body',
    ],
    [
      'an escaped NUL in a JSON key',
      { method: 'POST', url: '/things', type: 'application/json', payload: '{"a\\u0000":1}' },
      400,
      'malformed_body',
    ],
    [
      'a lone high surrogate in a JSON string',
      { method: 'POST', url: '/things', type: 'application/json', payload: '{"name":"\\ud800"}' },
      400,
      'malformed_body',
    ],
    [
      'a lone low surrogate in a JSON key',
      { method: 'POST', url: '/things', type: 'application/json', payload: '{"\\uDC00a":1}' },
      400,
      'malformed_body',
    ],
    [
      'a high surrogate escaped, then not its low one',
      {
        method: 'POST',
        url: '/things',
        type: 'application/json',
        payload: '{"name":"\\ud83d\\u0041"}',
      },
      400,
      'malformed_body',
    ],
    [
      'invalid JSON',
      { method: 'POST', url: '/things', type: 'application/json', payload: '{bad' },
      400,
      'malformed_body',
    ],
    [
      'a text/plain body',
      { method: 'POST', url: '/things', type: 'text/plain', payload: 'hi' },
      415,
      'unsupported_media_type',
    ],
    [
      'a body over the limit',
      {
        method: 'POST',
        url: '/things',
        type: 'application/json',
        payload: `"${'x'.repeat(2048)}"`,
      },
      413,
      'request_too_large',
    ],
    ['an unknown path', { method: 'PATCH', url: '/nothing/here' }, 404, 'not_found'],
    ['a method not allowed', { method: 'PATCH', url: '/things' }, 405, 'method_not_allowed'],
  ] as const)('%s: answered in our error body', async (_name, request, status, code) => {
    const answer = await send(request);
    expect(answer.status).toBe(status);
    expect(answer.body).toEqual({
      error: code,
      message: expect.any(String),
      request_id: answer.requestId,
    });
  });

  // QA F4: these came with fastify's wording ("Unsupported Media Type"), not ours.
  it.each([
    ['text/plain', 'request bodies are JSON: send content-type application/json'],
    [undefined, 'request bodies are JSON: send content-type application/json'],
    [
      'application/x-www-form-urlencoded',
      'request bodies are JSON: send content-type application/json',
    ],
  ])('a body sent as %s: 415 in our words', async (type, message) => {
    const answer = await send({
      method: 'POST',
      url: '/things',
      ...(type ? { type } : {}),
      payload: 'a=1',
    });
    expect([answer.status, answer.body['error'], answer.body['message']]).toEqual([
      415,
      'unsupported_media_type',
      message,
    ]);
  });

  it('a body over the limit: 413 in our words', async () => {
    const answer = await send({
      method: 'POST',
      url: '/things',
      type: 'application/json',
      payload: `"${'x'.repeat(2048)}"`,
    });
    expect([answer.status, answer.body['error'], answer.body['message']]).toEqual([
      413,
      'request_too_large',
      'the request body is over the size limit of 1 KiB',
    ]);
  });

  describe('a path that is a route, with a method it does not have (RFC 9110 §15.5.6)', () => {
    const ask = async (
      method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE' | 'OPTIONS',
      url: string,
    ) => {
      const response = await app.inject({ method, url });
      return {
        status: response.statusCode,
        allow: response.headers['allow'],
        text: response.body,
        requestId: response.headers['x-request-id'],
      };
    };

    it.each([
      ['GET on a POST-only route', 'GET', '/things', 'POST'],
      ['DELETE on a GET-only route', 'DELETE', '/things/a1', 'GET, HEAD'],
      ['PUT on an action route', 'PUT', '/things/a1/roll', 'POST'],
      ['OPTIONS (no route has it)', 'OPTIONS', '/things/a1', 'GET, HEAD'],
      ['the query string is not part of the path', 'GET', '/things?x=1', 'POST'],
    ] as const)('%s: 405 with Allow in our error body', async (_name, method, url, allow) => {
      const answer = await ask(method, url);
      expect([answer.status, answer.allow]).toEqual([405, allow]);
      expect(JSON.parse(answer.text)).toEqual({
        error: 'method_not_allowed',
        message: `${method} is not a method of this route; it allows ${allow}`,
        request_id: answer.requestId,
      });
    });

    it('HEAD on a POST-only route: 405 with Allow and no body on the wire; HEAD on a GET route is served', async () => {
      if (!app.getHttpServer().listening) await app.listen(0, '127.0.0.1');
      const { port } = app.getHttpServer().address() as AddressInfo;
      const wire = await new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () =>
          socket.write('HEAD /things HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n'),
        );
        let text = '';
        socket.on('data', (chunk) => (text += chunk.toString('latin1')));
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
      });
      expect(wire).toMatch(/^HTTP\/1\.1 405 Method Not Allowed\r\n/);
      expect(wire).toMatch(/\r\nallow: POST\r\n/i);
      expect(wire.endsWith('\r\n\r\n')).toBe(true);
      expect((await ask('HEAD', '/things/a1')).status).toBe(200);
    });

    it.each([
      ['an unknown path', 'GET', '/nothing'],
      ['a path one segment past a route', 'POST', '/things/a1/roll/more'],
      ['a URL that does not decode, no route of that method', 'PUT', '/things/%E0%A4%A'],
      [
        'a parameter over the length limit, no route of that method',
        'DELETE',
        `/things/${'x'.repeat(400)}`,
      ],
    ] as const)('%s: still 404 not_found, no Allow', async (_name, method, url) => {
      const answer = await ask(method, url);
      expect([answer.status, answer.allow]).toEqual([404, undefined]);
      expect(JSON.parse(answer.text)).toMatchObject({ error: 'not_found' });
    });
  });

  it('keeps the literal text "\\u0000" (an escaped backslash, not a NUL)', async () => {
    const answer = await send({
      method: 'POST',
      url: '/things',
      type: 'application/json',
      payload: '{"name":"a\\\\u0000"}',
    });
    expect(answer).toMatchObject({ status: 201, body: { body: { name: 'a\\u0000' } } });
  });

  it('refuses a lone surrogate as it refuses a NUL, naming it; keeps pairs and escaped text', async () => {
    const refused = await send({
      method: 'POST',
      url: '/things',
      type: 'application/json',
      payload: '{"name":"\\ud800"}',
    });
    expect(refused.body['message']).toBe(
      'text must not contain a lone surrogate (U+D800): it is no Unicode character',
    );
    for (const [payload, name] of [
      ['{"name":"\\ud83d\\ude00"}', '\u{1F600}'],
      ['{"name":"\u{1F600}"}', '\u{1F600}'],
      ['{"name":"\\\\ud800"}', '\\ud800'],
    ] as const) {
      const answer = await send({
        method: 'POST',
        url: '/things',
        type: 'application/json',
        payload,
      });
      expect(answer).toMatchObject({ status: 201, body: { body: { name } } });
    }
  });

  it('a body that is not UTF-8 is named so, not as a length mismatch (QA)', async () => {
    for (const bytes of [[0xff], [0xed, 0xa0, 0x80]]) {
      const payload = Buffer.concat([
        Buffer.from('{"name":"a'),
        Buffer.from(bytes),
        Buffer.from('b"}'),
      ]);
      const refused = await send({
        method: 'POST',
        url: '/things',
        type: 'application/json',
        payload,
      });
      expect([refused.status, refused.body['error'], refused.body['message']]).toEqual([
        400,
        'malformed_body',
        'the body is not valid UTF-8',
      ]);
    }
  });

  it('accepts +json media types', async () => {
    const answer = await send({
      method: 'POST',
      url: '/things',
      type: 'application/merge-patch+json',
      payload: '{"a":1}',
    });
    expect(answer).toMatchObject({ status: 201, body: { body: { a: 1 } } });
  });

  it('answers bytes that are no HTTP request in our error body, then closes', async () => {
    if (!app.getHttpServer().listening) await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as AddressInfo;
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write('NOT HTTP AT ALL\r\n\r\n'));
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString()));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as Record<
      string,
      unknown
    >;
    expect(body).toEqual({
      error: 'malformed_request',
      message: expect.any(String),
      request_id: expect.any(String),
    });
  });

  it(`a pipelined burst whose answers are not read: the connection is closed at ${MAX_REQUESTS_AWAITING_ANSWERS} requests awaiting their answers, the rest are never handled (QA RR: an unread burst took an app past its heap limit)`, async () => {
    if (!app.getHttpServer().listening) await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as AddressInfo;
    bigAnswers.handled = 0;
    const socket = connect(port, '127.0.0.1');
    // The server may reset the connection (its answers unread): listened to from the start.
    const closed = new Promise<true>((resolve) => socket.once('close', () => resolve(true)));
    socket.on('error', () => undefined);
    await new Promise((resolve) => socket.once('connect', resolve));
    // 200 requests in one write (one read, one parse), and nothing read for a while.
    socket.pause();
    socket.write('GET /big HTTP/1.1\r\nHost: a\r\n\r\n'.repeat(200));
    await new Promise((resolve) => setTimeout(resolve, 300));
    socket.on('data', () => undefined);
    socket.resume();
    // Old code: every answer is made, read, and the connection stays open.
    const timedOut = new Promise<false>((resolve) => setTimeout(() => resolve(false), 5_000));
    expect(await Promise.race([closed, timedOut])).toBe(true);
    socket.destroy();
    expect(bigAnswers.handled).toBeLessThanOrEqual(MAX_REQUESTS_AWAITING_ANSWERS);
  });

  it('a client pipelining within the bound and reading is served every answer', async () => {
    if (!app.getHttpServer().listening) await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as AddressInfo;
    const socket = connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const n = MAX_REQUESTS_AWAITING_ANSWERS;
    socket.write('GET /things/7 HTTP/1.1\r\nHost: a\r\n\r\n'.repeat(n));
    let text = '';
    await new Promise<void>((resolve, reject) => {
      socket.on('data', (chunk) => {
        text += chunk.toString();
        if (text.split('HTTP/1.1 200 OK').length - 1 === n && text.endsWith('{"id":"7"}'))
          resolve();
      });
      socket.on('error', reject);
    });
    socket.destroy();
    expect(text.split('HTTP/1.1 200 OK').length - 1).toBe(n);
  });

  it('an answer sent before a large body was read still reaches the client (no reset)', async () => {
    const { port } = app.getHttpServer().address() as AddressInfo;
    const body = Buffer.alloc(8 * 1024 * 1024, 0x61);
    const answer = await new Promise<string>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write(
          `POST /things HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`,
        );
        socket.write(body);
      });
      let text = '';
      socket.on('data', (chunk) => {
        text += chunk.toString('latin1');
        if (text.includes('request_too_large')) socket.destroy();
      });
      socket.on('error', () => undefined);
      socket.on('close', () => resolve(text));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
  });

  it('a request head over the limit: answered 431 with a FIN, then what the client still sends is read and dropped (lingering close), not met with a reset', async () => {
    if (!app.getHttpServer().listening) await app.listen(0, '127.0.0.1');
    const server = app.getHttpServer() as Server;
    const { port } = server.address() as AddressInfo;
    let serverSide: Socket | undefined;
    const onConnection = (socket: Socket) => (serverSide = socket);
    server.on('connection', onConnection);
    const more = 256 * 1024;
    const outcome = await new Promise<{ text: string; readAfterAnswer: number }>((resolve) => {
      let text = '';
      let readAtAnswer = 0;
      // Half-open allowed: the client goes on sending after the server's FIN, as a client still
      // writing a large head or body does when the answer comes.
      const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true }, () =>
        // 20 KB of path: over node's 16 KiB limit for a request head.
        socket.write(`POST /things?q=${'x'.repeat(20_000)} HTTP/1.1\r\nhost: x\r\n`),
      );
      socket.on('data', (chunk) => (text += chunk.toString('latin1')));
      socket.on('end', () => {
        // The answer is in. A server that closed outright resets on these bytes (and a reset can
        // discard an answer the client has not read yet); a lingering one reads and drops them.
        readAtAnswer = serverSide!.bytesRead;
        socket.write(Buffer.alloc(more, 0x61), () =>
          setTimeout(() => {
            const readAfterAnswer = serverSide!.bytesRead - readAtAnswer;
            socket.end();
            resolve({ text, readAfterAnswer });
          }, 200),
        );
      });
      socket.on('error', () => undefined);
    });
    server.off('connection', onConnection);
    expect(outcome.text).toMatch(/^HTTP\/1\.1 431 /);
    expect(outcome.readAfterAnswer).toBe(more);
  });

  const TOO_LONG = `/things/${'x'.repeat(400)}/roll`;
  it.each([
    [
      'a 413 from content-length (body-parser error), keep-alive',
      '/things',
      413,
      'request_too_large',
      false,
    ],
    [
      'a 413 from content-length (body-parser error), connection: close',
      '/things',
      413,
      'request_too_large',
      true,
    ],
    [
      'a 414 for a path parameter too long (framework error), keep-alive',
      TOO_LONG,
      414,
      'bad_request',
      false,
    ],
    [
      'a 414 for a path parameter too long (framework error), connection: close',
      TOO_LONG,
      414,
      'bad_request',
      true,
    ],
    [
      'a 405 for a method the route lacks, keep-alive',
      '/things/a1',
      405,
      'method_not_allowed',
      false,
    ],
    [
      'a 405 for a method the route lacks, connection: close',
      '/things/a1',
      405,
      'method_not_allowed',
      true,
    ],
  ])(
    '%s: answered before the body arrives, the connection stays and the body is drained',
    async (_name, path, status, code, clientCloses) => {
      if (!app.getHttpServer().listening) await app.listen(0, '127.0.0.1');
      const { port } = app.getHttpServer().address() as AddressInfo;
      const length = 6 * 1024 * 1024; // over the limit
      const socket = connect(port, '127.0.0.1');
      let text = '';
      let failed: Error | undefined;
      socket.on('data', (chunk) => (text += chunk.toString('latin1')));
      socket.on('error', (error) => (failed = error));
      const until = async (condition: () => boolean) => {
        for (let i = 0; i < 200 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
      };
      await new Promise<void>((resolve) => socket.once('connect', resolve));
      // Only the head and a first part of the body: the answer comes before the rest is sent.
      const close = clientCloses ? 'connection: close\r\n' : '';
      socket.write(
        `POST ${path} HTTP/1.1\r\nhost: x\r\n${close}content-type: application/json\r\ncontent-length: ${length}\r\n\r\n`,
      );
      socket.write(Buffer.alloc(64 * 1024, 0x61));
      await until(() => text.includes(`"${code}"`));
      expect(text).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      // Closing with the body still arriving is what made the kernel reset the connection and
      // lose this answer (fastify asks for `Connection: close` on a body-parser error).
      expect(text.toLowerCase()).not.toContain('connection: close');
      await new Promise<void>((resolve) =>
        socket.write(Buffer.alloc(length - 64 * 1024, 0x61), () => resolve()),
      );
      const answered = text.length;
      if (clientCloses) {
        // No reset while the rest of the body arrives (a closed server would answer it with RST).
        await new Promise((resolve) => setTimeout(resolve, 200));
      } else {
        // The body was read and dropped: the same connection serves the next request.
        socket.write('GET /things/after HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n');
        await until(() => text.slice(answered).includes('"id":"after"'));
        expect(text.slice(answered)).toMatch(/^HTTP\/1\.1 200 /);
      }
      socket.destroy();
      expect(failed).toBeUndefined();
    },
  );

  it('logs its routes once at start', () => {
    const line = routes.find((entry) => (entry as { msg?: string }).msg === 'http routes') as {
      routes: unknown[];
    };
    expect(line.routes).toEqual(
      expect.arrayContaining([
        { method: 'POST', url: '/things' },
        { method: 'GET', url: '/things/:id' },
        { method: 'POST', url: '/things/:id/roll' },
      ]),
    );
  });
});

@Module({})
class EmptyModule {}

describe('createHttpApp 405 rule: routes added on fastify itself, and a catch-all', () => {
  let app: NestFastifyApplication;

  beforeAll(async () => {
    app = await createHttpApp(EmptyModule, { logger: pino({ level: 'silent' }) });
    const fastify = app.getHttpAdapter().getInstance();
    // As the dashboard serves its page: one route straight on fastify, and a catch-all that
    // answers its own 404 for some paths.
    fastify.put('/raw/:id', async () => ({ ok: true }));
    fastify.get('/pages/*', async () => ({ page: true }));
    await app.init();
    await fastify.ready();
  });
  afterAll(() => app.close());

  it('a route registered on fastify counts: 405 with its Allow', async () => {
    const response = await app.inject({ method: 'POST', url: '/raw/7' });
    expect([response.statusCode, response.headers['allow']]).toEqual([405, 'PUT']);
    expect(response.json()).toMatchObject({ error: 'method_not_allowed' });
  });

  it('a path matched only by a catch-all `*` is no route: another method stays 404', async () => {
    expect((await app.inject({ method: 'GET', url: '/pages/any/thing' })).statusCode).toBe(200);
    const response = await app.inject({ method: 'POST', url: '/pages/any/thing' });
    expect([response.statusCode, response.headers['allow']]).toEqual([404, undefined]);
    expect(response.json()).toMatchObject({ error: 'not_found' });
  });
});

describe('createHttpApp request timeout (QA: bodies sent a byte at a time held connections)', () => {
  let app: NestFastifyApplication;

  beforeAll(async () => {
    // Node's own timer decides; a short limit keeps the wait under a second.
    app = await createHttpApp(ThingsModule, {
      logger: pino({ level: 'silent' }),
      requestTimeoutMs: 400,
    });
    await app.listen(0, '127.0.0.1');
  });
  afterAll(() => app.close());

  it('a body still arriving past the limit: 408 request_timeout in our body, then closed', async () => {
    const { port } = app.getHttpServer().address() as AddressInfo;
    const started = Date.now();
    const answer = await new Promise<string>((resolve) => {
      let text = '';
      const socket = connect(port, '127.0.0.1', () =>
        socket.write(
          'POST /things HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{',
        ),
      );
      // One byte every 100 ms keeps the connection busy (no idle timeout would end it).
      const drip = setInterval(() => socket.writable && socket.write(' '), 100);
      // Without a request timeout nothing answers: give up after 4 s with what arrived.
      const giveUp = setTimeout(() => socket.destroy(), 4_000);
      socket.on('data', (chunk) => (text += chunk.toString('latin1')));
      socket.on('error', () => undefined);
      socket.on('close', () => {
        clearInterval(drip);
        clearTimeout(giveUp);
        resolve(text);
      });
    });
    expect(answer).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({
      error: 'request_timeout',
      message: 'the request took too long to arrive',
      request_id: expect.any(String),
    });
    expect(Date.now() - started).toBeLessThan(4_000);
  });

  it('a client cutting its body short is no crash and no database outage (an app without Postgres)', async () => {
    const { port } = app.getHttpServer().address() as AddressInfo;
    const lines: Record<string, unknown>[] = [];
    const logged = await createHttpApp(ThingsModule, {
      logger: pino(
        { level: 'debug' },
        { write: (line: string) => void lines.push(JSON.parse(line)) },
      ),
    });
    await logged.listen(0, '127.0.0.1');
    const loggedPort = (logged.getHttpServer().address() as AddressInfo).port;
    for (const target of [port, loggedPort])
      await new Promise<void>((resolve) => {
        const socket = connect(target, '127.0.0.1', () =>
          socket.write(
            'POST /things HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"a"',
            () => setImmediate(() => socket.resetAndDestroy()),
          ),
        );
        socket.on('error', () => undefined);
        socket.on('close', () => resolve());
      });
    // Still serving (the old filter asked the app for its DbJobGate and Nest ended the process).
    const response = await fetch(`http://127.0.0.1:${loggedPort}/things`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(response.status).toBe(201);
    await logged.close();
    expect(lines.filter((line) => line['msg'] === 'request failed')).toEqual([]);
  });

  it('a request that arrives in time is served', async () => {
    const { port } = app.getHttpServer().address() as AddressInfo;
    const response = await fetch(`http://127.0.0.1:${port}/things`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    expect([response.status, await response.json()]).toEqual([201, { body: { a: 1 } }]);
  });
});

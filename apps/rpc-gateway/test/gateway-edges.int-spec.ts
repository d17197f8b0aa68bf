import { request as httpRequest } from 'node:http';
import { connect as connectTcp } from 'node:net';
import { brotliCompressSync, deflateSync, gunzipSync, gzipSync } from 'node:zlib';
import { Client, credentials, Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { createHash } from 'node:crypto';
import WebSocket from 'ws';
import { startAnvil, type AnvilInstance } from '@meridian/testing';
import {
  provisionNamespace,
  rpc,
  startGateway,
  type RunningGateway,
  borApiClientClass,
} from './gateway-harness';

/**
 * Regression tests for the defects found by probing the gateway from outside (issue "Edges that
 * never fall"): each request here once took a process down, hung a gRPC channel, or was answered
 * in the web framework's own words.
 */
const TOKENS = {
  eth: 'tok_edges_eth_000001',
  polygon: 'tok_edges_polygon_01',
  exhausted: 'tok_edges_broke_0001',
  slow: 'tok_edges_slow_00001',
};

/** One raw HTTP/1.1 exchange: what the server wrote before closing (or after `waitMs`). */
function rawExchange(port: number, request: string, waitMs = 3_000): Promise<string> {
  return new Promise((resolve) => {
    const socket = connectTcp(port, '127.0.0.1', () => socket.write(request));
    let out = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(out);
    }, waitMs);
    socket.on('data', (d) => (out += d.toString()));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(out);
    });
  });
}

/** A POST as it went on the wire and came back: no client-side decoding of the answer. */
function rawPost(
  port: number,
  path: string,
  body: Buffer,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, path, method: 'POST', headers: { ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const upgradeRequest = (path: string, extra = '') =>
  `GET ${path} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
  `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n${extra}\r\n`;

describe('rpc-gateway edges: requests that once broke it', () => {
  let eth: AnvilInstance;
  let polygon: AnvilInstance;
  let ns: Awaited<ReturnType<typeof provisionNamespace>>;
  let gateway: RunningGateway;

  beforeAll(async () => {
    [eth, polygon, ns] = await Promise.all([
      startAnvil({ chainId: 1 }),
      startAnvil({ chainId: 137 }),
      provisionNamespace(),
    ]);
    gateway = await startGateway({
      REGION: 'eu',
      NATS_URL: ns.url,
      NATS_PREFIX: ns.prefix,
      UPSTREAMS: JSON.stringify({ 'eth-mainnet': [eth.url], 'polygon-mainnet': [polygon.url] }),
      STATIC_ACCESS_TOKENS: JSON.stringify({
        [TOKENS.eth]: { accountId: 'acct-edges', network: 'eth-mainnet', planId: 'pro' },
        [TOKENS.polygon]: { accountId: 'acct-edges-p', network: 'polygon-mainnet', planId: 'pro' },
        [TOKENS.exhausted]: {
          accountId: 'acct-broke',
          network: 'eth-mainnet',
          status: 'exhausted',
        },
        [TOKENS.slow]: { accountId: 'acct-slow', network: 'eth-mainnet', nodeRps: 1 },
      }),
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([eth?.stop(), polygon?.stop(), ns?.cleanup()]);
  });

  const alive = async () => {
    const answer = await rpc(`${gateway.url}/${TOKENS.eth}`, {
      jsonrpc: '2.0',
      id: 1,
      method: 'eth_blockNumber',
      params: [],
    });
    expect((answer.json as { result: string }).result).toMatch(/^0x/);
  };

  describe('WebSocket upgrade', () => {
    it.each([
      ['malformed percent-encoding (took the process down)', '/%zz', 401],
      ['a lone percent sign', '/%', 401],
      ['a truncated UTF-8 escape', '/%E0%A4%A', 401],
      ['an unknown token', '/tok_nobody_here', 401],
      ['a sub-path', '/a/b/c', 404],
      ['the root', '/', 404],
    ])(
      '%s (%s) → %i with a JSON body, and the gateway keeps serving',
      async (_name, path, code) => {
        const answer = await rawExchange(gateway.port, upgradeRequest(path));
        expect(answer).toMatch(new RegExp(`^HTTP/1.1 ${code} `));
        const body = answer.slice(answer.indexOf('\r\n\r\n') + 4);
        expect(() => JSON.parse(body)).not.toThrow();
        await alive();
      },
    );

    it('a session whose token was revoked between its check and its start ends at once', async () => {
      // Static tokens resolve again after an eviction, so the upgrade passes the check: only
      // the remembered revocation can end the session (the race the upgrade leaves open).
      const hash = createHash('sha256').update(TOKENS.eth).digest('hex');
      gateway.runtime.credentials.revokeHash(hash);
      const ws = new WebSocket(`ws://127.0.0.1:${gateway.port}/${TOKENS.eth}`);
      const messages: unknown[] = [];
      ws.on('message', (data) => messages.push(JSON.parse(data.toString())));
      const code = await new Promise<number>((resolve) => ws.once('close', resolve));
      expect(code).toBe(1008);
      expect(messages).toEqual([
        { jsonrpc: '2.0', id: null, error: { code: -32041, message: expect.any(String) } },
      ]);
    });

    it('an upgrade with a valid token but a broken handshake is answered by the WebSocket library, not a crash', async () => {
      const answer = await rawExchange(
        gateway.port,
        `GET /${TOKENS.eth} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 99\r\n\r\n`,
      );
      expect(answer).toMatch(/^HTTP\/1.1 4\d\d /);
      await alive();
    });
  });

  describe('HTTP refusals, each mapped once from its DomainError', () => {
    const call = { jsonrpc: '2.0', id: 42, method: 'eth_blockNumber', params: [] };

    it('unknown token → 401, JSON-RPC -32041 under the request id', async () => {
      const answer = await rpc(`${gateway.url}/tok_unknown_000001`, call);
      expect(answer.status).toBe(401);
      expect(answer.json).toMatchObject({ id: 42, error: { code: -32041 } });
    });

    it('malformed percent-encoding in the token → 401 like any unknown token', async () => {
      expect((await rpc(`${gateway.url}/%zz`, call)).status).toBe(401);
    });

    it('a network not offered over JSON-RPC here → 404', async () => {
      const shared = await startGateway({
        REGION: 'shared',
        NATS_URL: ns.url,
        NATS_PREFIX: ns.prefix,
        GRPC_ENABLED: 'false',
        STATIC_ACCESS_TOKENS: JSON.stringify({
          [TOKENS.eth]: { accountId: 'acct-edges', network: 'eth-mainnet' },
        }),
      });
      try {
        const answer = await rpc(`${shared.url}/${TOKENS.eth}`, call);
        expect(answer.status).toBe(404);
        expect(answer.json).toMatchObject({
          error: { code: -32000, message: expect.stringContaining('not offered over JSON-RPC') },
        });
      } finally {
        await shared.stop();
      }
    });

    it('a polygon-amoy token at asia (not offered there) → 404 with -32000, told apart from a bad token (401, -32041)', async () => {
      const amoy = 'tok_edges_amoy_00001';
      const asia = await startGateway({
        REGION: 'asia',
        NATS_URL: ns.url,
        NATS_PREFIX: ns.prefix,
        GRPC_ENABLED: 'false',
        STATIC_ACCESS_TOKENS: JSON.stringify({
          [amoy]: { accountId: 'acct-edges-amoy', network: 'polygon-amoy' },
        }),
      });
      try {
        const answer = await rpc(`${asia.url}/${amoy}`, call);
        expect(answer.status).toBe(404);
        expect(answer.json).toEqual({
          jsonrpc: '2.0',
          id: 42,
          error: {
            code: -32000,
            message:
              'server error: network polygon-amoy is not offered over JSON-RPC at this endpoint',
          },
        });
        const upgrade = await rawExchange(asia.port, upgradeRequest(`/${amoy}`));
        expect(upgrade).toMatch(/^HTTP\/1.1 404 /);
        expect(JSON.parse(upgrade.slice(upgrade.indexOf('\r\n\r\n') + 4))).toMatchObject({
          error: { code: -32000 },
        });
        const unknown = await rpc(`${asia.url}/tok_edges_nobody_001`, call);
        expect(unknown.status).toBe(401);
        expect(unknown.json).toMatchObject({ error: { code: -32041 } });
      } finally {
        await asia.stop();
      }
    });

    it('CU exhausted → 402 with -32040 and the request id echoed', async () => {
      const answer = await rpc(`${gateway.url}/${TOKENS.exhausted}`, call);
      expect(answer.status).toBe(402);
      expect(answer.json).toMatchObject({ id: 42, error: { code: -32040 } });
    });

    it('plan RPS exceeded → 429 with Retry-After and -32005', async () => {
      const url = `${gateway.url}/${TOKENS.slow}`;
      const answers = await Promise.all([rpc(url, call), rpc(url, call), rpc(url, call)]);
      const refused = answers.find((a) => a.status === 429)!;
      expect(refused).toBeDefined();
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      // -32005's words first (QA: "rate limit exceeded: …" broke the rule).
      expect(refused.json).toMatchObject({
        id: 42,
        error: {
          code: -32005,
          message: expect.stringMatching(/^limit exceeded: the plan's rate limit of \d+ requests/),
          data: { rps: 1, retryAfterMs: expect.any(Number) },
        },
      });
    });

    it('plan RPS exceeded on an open WebSocket → -32005 whose data says when to come back', async () => {
      // No Retry-After header on a WebSocket: the answer itself carries the wait.
      const ws = new WebSocket(`ws://127.0.0.1:${gateway.port}/${TOKENS.slow}/`);
      await new Promise((r) => ws.once('open', r));
      try {
        const answers: Array<{ id: number; error?: { code: number; data?: unknown } }> = [];
        const all = new Promise<void>((resolve) =>
          ws.on('message', (d) => {
            answers.push(JSON.parse(d.toString()));
            if (answers.length === 3) resolve();
          }),
        );
        for (const id of [1, 2, 3]) ws.send(JSON.stringify({ ...call, id }));
        await all;
        const refused = answers.find((a) => a.error?.code === -32005);
        expect(refused?.error?.data).toEqual({ rps: 1, retryAfterMs: expect.any(Number) });
        const { retryAfterMs } = refused!.error!.data as { retryAfterMs: number };
        expect(retryAfterMs).toBeGreaterThan(0);
        expect(retryAfterMs).toBeLessThanOrEqual(1_000);
      } finally {
        ws.close();
      }
    });

    it('a method name of a megabyte is refused without being repeated', async () => {
      const answer = await rpc(`${gateway.url}/${TOKENS.eth}`, {
        jsonrpc: '2.0',
        id: 1,
        method: 'a'.repeat(1_000_000),
      });
      expect(answer.json).toMatchObject({ error: { code: -32601 } });
      expect(answer.text.length).toBeLessThan(400);
    });
  });

  describe('CORS for browser dApps on the JSON-RPC endpoint', () => {
    const call = { jsonrpc: '2.0', id: 42, method: 'eth_blockNumber', params: [] };
    const origin = { origin: 'https://dapp.example' };

    it('a preflight on the token path → 204 allowing any origin, POST and the asked headers', async () => {
      const answer = await fetch(`${gateway.url}/${TOKENS.eth}`, {
        method: 'OPTIONS',
        headers: {
          origin: 'https://dapp.example',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type',
        },
      });
      expect(answer.status).toBe(204);
      expect(answer.headers.get('access-control-allow-origin')).toBe('*');
      expect(answer.headers.get('access-control-allow-methods')).toBe('POST, OPTIONS');
      expect(answer.headers.get('access-control-allow-headers')).toBe('content-type');
      expect(Number(answer.headers.get('access-control-max-age'))).toBeGreaterThan(0);
    });

    it('every POST answer carries Access-Control-Allow-Origin: *, refusals included', async () => {
      const answers = [
        await rpc(`${gateway.url}/${TOKENS.eth}/`, call, origin),
        await rpc(`${gateway.url}/tok_unknown_000001`, call, origin),
        await rpc(`${gateway.url}/${TOKENS.exhausted}`, call, origin),
        ...(await Promise.all(
          Array.from({ length: 3 }, () => rpc(`${gateway.url}/${TOKENS.slow}`, call, origin)),
        )),
      ];
      expect(new Set(answers.map((a) => a.status))).toEqual(new Set([200, 401, 402, 429]));
      for (const answer of answers)
        expect(answer.headers.get('access-control-allow-origin')).toBe('*');
    });

    it("the gateway's other routes are not opened: GET /healthz, /metrics and sub-paths carry no CORS header", async () => {
      // (`/healthz` is also a one-segment path: a POST or OPTIONS there is the JSON-RPC endpoint's,
      // for a token named "healthz", answered 401 like any unknown token.)
      for (const path of ['/healthz', '/metrics']) {
        const answer = await fetch(`${gateway.url}${path}`, { headers: origin });
        expect(answer.status).toBe(200);
        expect(answer.headers.get('access-control-allow-origin')).toBeNull();
      }
      const sub = await fetch(`${gateway.url}/${TOKENS.eth}/more`, {
        method: 'OPTIONS',
        headers: origin,
      });
      expect(sub.status).not.toBe(204);
      expect(sub.headers.get('access-control-allow-origin')).toBeNull();
    });
  });

  it('a malformed URL on a framework route is answered in our JSON form', async () => {
    const answer = await fetch(`${gateway.url}/%zz`);
    expect(answer.status).toBe(400);
    const body = (await answer.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ error: expect.any(String), request_id: expect.any(String) });
    expect(body).not.toHaveProperty('statusCode');
  });

  describe('BorApi gRPC: an oversized field never hangs the channel', () => {
    const proto = { bor: { BorApi: borApiClientClass() } };

    it('request bytes that are not protobuf → INVALID_ARGUMENT (was INTERNAL; H2 fuzz G1)', async () => {
      const client = new Client(`127.0.0.1:${gateway.grpcPort}`, credentials.createInsecure());
      try {
        const error = await new Promise<ServiceError | null>((resolve) =>
          client.makeUnaryRequest(
            '/bor.BorApi/GetVoteOnHash',
            (bytes: Buffer) => bytes,
            (bytes: Buffer) => bytes,
            Buffer.from('57ff33', 'hex'),
            new Metadata(),
            { deadline: Date.now() + 5_000 },
            (e) => resolve(e),
          ),
        );
        expect(error?.code).toBe(status.INVALID_ARGUMENT);
      } finally {
        client.close();
      }
    });

    it.each([
      // Echoed into the grpc-message trailer, it hung every later call of the channel.
      ['10 kB of junk in HeaderByNumber.number', 10_000, status.INVALID_ARGUMENT],
      [
        '100 kB of junk: the request is larger than any BorApi request',
        100_000,
        status.RESOURCE_EXHAUSTED,
      ],
      ['3 MB of junk', 3_000_000, status.RESOURCE_EXHAUSTED],
    ])(
      '%s (%i characters) → status %i, and the same channel answers the next call',
      async (_name, size, code) => {
        const client = new proto.bor.BorApi(
          `127.0.0.1:${gateway.grpcPort}`,
          credentials.createInsecure(),
        );
        const ask = (number: string) =>
          new Promise<{ error: ServiceError | null; response: unknown }>((resolve) => {
            const md = new Metadata();
            md.set('x-access-token', TOKENS.polygon);
            client['HeaderByNumber']!(
              { number },
              md,
              { deadline: Date.now() + 5_000 },
              (error, response) => resolve({ error, response }),
            );
          });
        try {
          expect((await ask('latest')).error).toBeNull();
          const bad = await ask('x'.repeat(size));
          expect(bad.error?.code).toBe(code);
          expect(bad.error!.details.length).toBeLessThanOrEqual(512);
          for (let i = 0; i < 3; i++) expect((await ask('latest')).error).toBeNull();
        } finally {
          client.close();
        }
      },
    );
  });

  describe('content codings (README "Compression")', () => {
    /** 40 genesis blocks in one batch: about 40 KiB of JSON, over the gzip threshold. */
    const bigBatch = Buffer.from(
      JSON.stringify(
        Array.from({ length: 40 }, (_, i) => ({
          jsonrpc: '2.0',
          id: i,
          method: 'eth_getBlockByNumber',
          params: ['0x0', false],
        })),
      ),
    );
    const small = Buffer.from('{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}');
    const post = (body: Buffer, headers: Record<string, string>) =>
      rawPost(gateway.port, `/${TOKENS.eth}`, body, {
        'content-type': 'application/json',
        ...headers,
      });

    it('a large answer is gzipped for a client that admits gzip, and is the same JSON', async () => {
      const plain = await post(bigBatch, {});
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.body.length).toBeGreaterThan(16 * 1024);
      const zipped = await post(bigBatch, { 'accept-encoding': 'br;q=1, gzip;q=0.8' });
      expect([zipped.status, zipped.headers['content-encoding'], zipped.headers['vary']]).toEqual([
        200,
        'gzip',
        'accept-encoding',
      ]);
      expect(Number(zipped.headers['content-length'])).toBe(zipped.body.length);
      expect(zipped.body.length * 3).toBeLessThan(plain.body.length);
      expect(JSON.parse(gunzipSync(zipped.body).toString())).toEqual(
        JSON.parse(plain.body.toString()),
      );
    });

    it.each([
      ['gzip refused with q=0', 'gzip;q=0, identity'],
      ['only br offered', 'br'],
      ['anything but gzip', '*, gzip;q=0'],
    ])('not gzipped when %s', async (_name, accept) => {
      const answer = await post(bigBatch, { 'accept-encoding': accept });
      expect(answer.headers['content-encoding']).toBeUndefined();
      expect(Array.isArray(JSON.parse(answer.body.toString()))).toBe(true);
    });

    it('a small answer is sent as it is even when gzip is admitted', async () => {
      const answer = await post(small, { 'accept-encoding': 'gzip' });
      expect(answer.headers['content-encoding']).toBeUndefined();
      expect(JSON.parse(answer.body.toString())).toEqual({ jsonrpc: '2.0', id: 1, result: '0x1' });
    });

    it.each([
      ['gzip', gzipSync],
      ['deflate', deflateSync],
      ['br', brotliCompressSync],
    ] as const)('a %s-encoded request body is decoded and answered', async (coding, encode) => {
      const answer = await post(encode(small), { 'content-encoding': coding });
      expect([answer.status, JSON.parse(answer.body.toString())]).toEqual([
        200,
        { jsonrpc: '2.0', id: 1, result: '0x1' },
      ]);
    });

    it('a body that decodes beyond the limit → 413 -32005; one that does not decode → -32700; an unknown coding → 415 -32600', async () => {
      // 6 MiB of spaces around a call: a few KiB on the wire.
      const bomb = gzipSync(Buffer.concat([small, Buffer.alloc(6 * 1024 * 1024, 0x20)]));
      expect(bomb.length).toBeLessThan(64 * 1024);
      const tooLarge = await post(bomb, { 'content-encoding': 'gzip' });
      expect([tooLarge.status, JSON.parse(tooLarge.body.toString())]).toEqual([
        413,
        { jsonrpc: '2.0', id: null, error: { code: -32005, message: expect.any(String) } },
      ]);
      const broken = await post(Buffer.from('not gzip at all'), { 'content-encoding': 'gzip' });
      expect(JSON.parse(broken.body.toString())).toMatchObject({ error: { code: -32700 } });
      // QA: 400 with -32602 under the message "invalid request". Now code and message agree:
      // 415 (RFC 9110: an unsupported Content-Encoding), -32600 "invalid request".
      for (const coding of ['compress', 'zstd']) {
        const unknown = await post(small, { 'content-encoding': coding });
        expect(unknown.status).toBe(415);
        // RFC 9110 §12.5.3: the 415 lists the codings the gateway reads.
        expect(unknown.headers['accept-encoding']).toBe('gzip, deflate, br');
        expect(JSON.parse(unknown.body.toString())).toEqual({
          jsonrpc: '2.0',
          id: null,
          error: {
            code: -32600,
            message:
              'invalid request: unsupported Content-Encoding; send the body as is, or gzip, deflate or br',
          },
        });
      }
      await alive();
    });
  });
});

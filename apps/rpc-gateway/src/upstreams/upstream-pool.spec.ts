import { createServer, type Server } from 'node:http';
import { Registry } from 'prom-client';
import { GatewayMetrics } from '../observability/gateway-metrics';
import { AnswersInFlight } from './answer-budget';
import { HealthChecker } from './health-checker';
import { HttpTransport, UpstreamPool } from './upstream-pool';
import { watchBreakers } from './upstream-router';

describe("HttpTransport: what a node's HTTP status means", () => {
  let server: Server;
  let url: string;
  const replies: [number, string][] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const [status, body] = replies.shift()!;
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(body);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it.each([
    // QA: a 429 with a JSON-RPC body was relayed and billed.
    [429, '{"jsonrpc":"2.0","id":0,"error":{"code":-32005,"message":"rate limited"}}', 'throttled'],
    [429, 'Too Many Requests', 'throttled'],
    [502, '<html>Bad Gateway</html>', 'bad_answer'],
    [400, '{"jsonrpc":"2.0","id":0,"error":{"code":-32602,"message":"invalid argument"}}', 'ok'],
  ])('HTTP %i %s: %s', async (status, body, expected) => {
    replies.push([status, body]);
    const transport = new HttpTransport(url, 1);
    try {
      const outcome = await transport.post('{}', 1_000, 1024 * 1024);
      expect(outcome.ok ? 'ok' : outcome.failure).toBe(expected);
    } finally {
      await transport.close();
    }
  });
});

describe('HttpTransport: an answer past maxBytes (ADR 0215)', () => {
  let server: Server;
  let url: string;
  let closedEarly: Promise<boolean>;

  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        // 64 MiB in 64 KiB chunks, written as fast as the socket takes them.
        const chunk = Buffer.alloc(64 * 1024, 'x');
        let left = 1024;
        closedEarly = new Promise((resolve) => {
          res.on('close', () => resolve(left > 0));
        });
        res.writeHead(200, { 'content-type': 'application/json' });
        const write = () => {
          while (left > 0) {
            left--;
            if (!res.write(chunk)) return void res.once('drain', write);
          }
          res.end();
        };
        write();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('stops reading past the limit: too_large, and the node stops sending (QA H1)', async () => {
    const transport = new HttpTransport(url, 1);
    try {
      const outcome = await transport.post('{}', 5_000, 1024 * 1024);
      expect(outcome).toEqual({
        ok: false,
        failure: 'too_large',
        reason: 'answer over 1048576 bytes',
      });
      // The connection was destroyed: the node did not get to write its 64 MiB.
      await expect(closedEarly).resolves.toBe(true);
    } finally {
      await transport.close();
    }
  });

  it("stops reading when the worker's budget in flight cannot hold the body: busy (ADR 0215 amendment)", async () => {
    const transport = new HttpTransport(url, 1);
    const inFlight = new AnswersInFlight(4 * 1024 * 1024);
    // Another answer of 3 MiB is being read: this body may grow past 1 MiB by 1 MiB at most.
    const other = inFlight.read();
    expect(other.grow(3 * 1024 * 1024)).toBe(true);
    const read = inFlight.read();
    try {
      const outcome = await transport.post('{}', 5_000, 64 * 1024 * 1024, read);
      expect(outcome).toEqual({
        ok: false,
        failure: 'busy',
        reason: 'answers in flight over budget',
      });
      await expect(closedEarly).resolves.toBe(true);
      // What was held while reading it is given back with the read; nothing of it stays.
      read.release();
      expect(inFlight.bytes).toBe(3 * 1024 * 1024);
      other.release();
      expect(inFlight.bytes).toBe(0);
    } finally {
      await transport.close();
    }
  });
});

/** A pool of one node on an injected clock: it times out until `node.answer` is set. */
function oneNodePool(clock: { now: number }, node: { answer?: string }): UpstreamPool {
  return new UpstreamPool(
    'eth-mainnet',
    [
      {
        url: 'http://node.test:8545',
        wsUrl: 'ws://node.test:8545',
        tag: '00000000',
        floorTag: 'f0000000',
      },
    ],
    {
      maxLagBlocks: 1,
      connections: 1,
      now: () => clock.now,
      transport: () => ({
        post: async () =>
          node.answer === undefined
            ? { ok: false, failure: 'ambiguous', reason: 'UND_ERR_HEADERS_TIMEOUT' }
            : { ok: true, text: node.answer },
        close: async () => undefined,
      }),
    },
  );
}

describe('HealthChecker: a failed check counts against the breaker', () => {
  it('a node failing its checks is open after 3, with no call sent to it; a passing check opens none', async () => {
    const clock = { now: 0 };
    const node: { answer?: string } = {};
    const pool = oneNodePool(clock, node);
    const logger = { warn: jest.fn(), info: jest.fn() };
    const checker = new HealthChecker([pool], new GatewayMetrics(new Registry()), logger as never, {
      intervalMs: 2_000,
      timeoutMs: 1_500,
    });
    await checker.checkAll();
    await checker.checkAll();
    expect(pool.attempt()).toBeDefined();
    await checker.checkAll();
    expect(pool.upstreams[0]!.breaker.stateAt(clock.now)).toBe('open');
    expect(pool.attempt()).toBeUndefined();
    // Answering eth_blockNumber again does not close it: a call's answer (the trial) does.
    node.answer = '{"jsonrpc":"2.0","id":1,"result":"0x10"}';
    await checker.checkAll();
    expect(pool.upstreams[0]!.breaker.stateAt(clock.now)).toBe('open');
    expect(pool.upstreams[0]!.height).toBe(16);
  });

  it('on an idle replica a passing check past the cooldown closes it; once a call was tried, the trial decides', async () => {
    const clock = { now: 0 };
    const node: { answer?: string } = {};
    const pool = oneNodePool(clock, node);
    const metrics = new GatewayMetrics(new Registry());
    const logger = { warn: jest.fn(), info: jest.fn() };
    watchBreakers(pool, metrics, logger);
    const gauge = async () => (await metrics.upstreamBreakerOpen.get()).values[0]!.value;
    const checker = new HealthChecker([pool], metrics, logger as never, {
      intervalMs: 2_000,
      timeoutMs: 1_500,
    });
    // Every node hung: three failed checks open the breaker.
    for (let i = 0; i < 3; i++) await checker.checkAll();
    expect(await gauge()).toBe(1);
    // Back, and no call arrives (QA: open 8 minutes later, closed only by a call).
    node.answer = '{"jsonrpc":"2.0","id":1,"result":"0x10"}';
    clock.now = 4_999;
    await checker.checkAll();
    expect(await gauge()).toBe(1);
    clock.now = 5_000;
    await checker.checkAll();
    expect(pool.upstreams[0]!.breaker.stateAt(clock.now)).toBe('closed');
    expect(await gauge()).toBe(0);
    expect(logger.info).toHaveBeenLastCalledWith(
      expect.objectContaining({ reason: expect.stringMatching(/health check/) }),
      expect.stringMatching(/closed/),
    );
    // A node answering its checks but failing calls: its failed trial keeps it open.
    for (let i = 0; i < 3; i++) pool.settle(pool.attempt()!, false, 'HTTP 502');
    clock.now = 10_000;
    const trial = pool.attempt()!;
    expect(trial.admission).toBe('trial');
    pool.settle(trial, false, 'HTTP 502');
    clock.now = 30_000;
    await checker.checkAll();
    expect(pool.upstreams[0]!.breaker.stateAt(clock.now)).toBe('half_open');
    expect(await gauge()).toBe(1);
  });
});

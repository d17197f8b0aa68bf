import { createServer, type Server } from 'node:http';
import { credentials, Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { unpackAccounts, type UsageFlushedV2 } from '@meridian/contracts';
import { startAnvil, type AnvilInstance } from '@meridian/testing';
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { ABANDONABLE_SLICE, SLICES_IN_FLIGHT } from '../src/upstreams/upstream-router';
import { borApiClientClass, provisionNamespace, type BorApiClient } from './gateway-harness';
import { startGatewayProcess, type GatewayLogLine, type GatewayProcess } from './gateway-process';

/**
 * A BorApi call its client cancels, against a real gateway process on an anvil P devnet (ADR
 * 0203 amendment "a cancelled gRPC call"). QA (Low): 30 GetBlockInfoInBatch of blocks 1-100
 * cancelled 5-34 ms in; 8 were logged status 0 (OK) with 100 billed calls each. Here the node
 * is anvil behind a proxy that counts the calls it relays and holds them while the test says,
 * so that the cancel lands while the node works on the batch's first calls, every run.
 */
const TOKEN = 'tok_grpc_cancel_0000000001';
const ACCOUNT = 'grpc-cancel';
const CU_PER_CALL = 20; // eth_getBlockByNumber on network P

interface RequestLine extends GatewayLogLine {
  request_id?: string;
  method?: string;
  calls?: number;
  billed_calls?: number;
  cu?: number;
  ms?: number;
}

/**
 * anvil behind a proxy counting the calls it relays (health checks, eth_blockNumber alone, are
 * relayed but not counted), holding every counted request while `hold` is set. `answered` is
 * told each counted request's answer just before it is written back (the count so far).
 */
async function holdingUpstream(anvilUrl: string) {
  const state = {
    calls: 0,
    hold: undefined as Promise<void> | undefined,
    reached: () => {},
    answers: 0,
    answered: undefined as ((answers: number) => void) | undefined,
  };
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const parsed = JSON.parse(body) as { method: string } | { method: string }[];
      const calls = Array.isArray(parsed) ? parsed : [parsed];
      const health = calls.every((c) => c.method === 'eth_blockNumber');
      if (!health) {
        state.calls += calls.length;
        state.reached();
      }
      const held = health ? undefined : state.hold;
      void (held ?? Promise.resolve())
        .then(() =>
          fetch(anvilUrl, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body,
          }),
        )
        .then((answer) => answer.text())
        .then(
          (text) => {
            // Told first: a client's cancel there leaves with this answer, not before it.
            if (!health) state.answered?.(++state.answers);
            response.end(text);
          },
          () => response.destroy(),
        );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    state,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('rpc-gateway: a BorApi call its client cancels', () => {
  let anvil: AnvilInstance;
  let upstream: Awaited<ReturnType<typeof holdingUpstream>>;
  let namespace: Awaited<ReturnType<typeof provisionNamespace>>;
  let gateway: GatewayProcess;
  let client: BorApiClient;

  beforeAll(async () => {
    anvil = await startAnvil({ chainId: 137 });
    // 1,000 blocks: GetBlockInfoInBatch 1..100, and QA's n..n+99.
    await fetch(anvil.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":1,"method":"anvil_mine","params":["0x3e8"]}',
    });
    upstream = await holdingUpstream(anvil.url);
    namespace = await provisionNamespace();
    gateway = await startGatewayProcess(
      {
        REGION: 'eu',
        GATEWAY_WORKERS: '1',
        LOG_LEVEL: 'info',
        REQUEST_LOGS: 'true',
        HEALTH_INTERVAL_MS: '300',
        USAGE_FLUSH_MS: '200',
        NATS_URL: namespace.url,
        NATS_PREFIX: namespace.prefix,
        UPSTREAMS: JSON.stringify({ 'polygon-mainnet': [upstream.url] }),
        STATIC_ACCESS_TOKENS: JSON.stringify({
          [TOKEN]: { accountId: ACCOUNT, network: 'polygon-mainnet', nodeRps: 1e6 },
        }),
      },
      { workers: 1, startTimeoutMs: 60_000 },
    );
    const BorApi = borApiClientClass();
    client = new BorApi(
      `127.0.0.1:${gateway.app.options.env!['GRPC_PORT']}`,
      credentials.createInsecure(),
    );
  }, 120_000);

  afterAll(async () => {
    client?.close();
    if (gateway?.app.running()) await gateway.app.stop(0);
    await upstream?.close();
    await anvil?.stop();
    await namespace?.cleanup();
  });

  const metadata = (requestId: string, token = TOKEN) => {
    const md = new Metadata();
    md.set('x-access-token', token);
    md.set('x-request-id', requestId);
    return md;
  };
  const lineOf = (requestId: string) =>
    (gateway.lines as RequestLine[]).filter((l) => l.request_id === requestId);
  const billed = { calls: 0 };

  it('a batch not cancelled: 100 blocks, status 0, 100 calls billed', async () => {
    const before = upstream.state.calls;
    const answer = await new Promise<{ error: ServiceError | null; response: unknown }>((resolve) =>
      client['GetBlockInfoInBatch']!(
        { startBlockNumber: 1, endBlockNumber: 100 },
        metadata('req-whole'),
        (error, response) => resolve({ error, response }),
      ),
    );
    expect(answer.error).toBeNull();
    expect((answer.response as { blocks: unknown[] }).blocks).toHaveLength(100);
    expect(upstream.state.calls - before).toBe(100);
    await until(() => lineOf('req-whole').length === 1);
    expect(lineOf('req-whole')[0]).toMatchObject({ status: 0, calls: 100, billed_calls: 100 });
    billed.calls += 100;
  });

  it('cancelled while the node answers its first calls: CANCELLED in the log, the rest never sent nor billed', async () => {
    const before = upstream.state.calls;
    let release!: () => void;
    upstream.state.hold = new Promise<void>((resolve) => (release = resolve));
    const reached = new Promise<void>((resolve) => (upstream.state.reached = resolve));
    const error = await new Promise<ServiceError | null>((resolve) => {
      const call = client['GetBlockInfoInBatch']!(
        { startBlockNumber: 1, endBlockNumber: 100 },
        metadata('req-cancelled'),
        (e) => resolve(e),
      ) as unknown as { cancel(): void };
      void reached.then(() => call.cancel());
    });
    expect(error?.code).toBe(status.CANCELLED);
    // Answered after the gateway read the cancel: one connection's HTTP/2 frames arrive in order.
    const refused = await new Promise<ServiceError | null>((resolve) =>
      client['HeaderByNumber']!({ number: '0x1' }, metadata('req-after', 'tok_unknown'), (e) =>
        resolve(e),
      ),
    );
    expect(refused?.code).toBe(status.UNAUTHENTICATED);
    upstream.state.hold = undefined;
    release();

    await until(() => lineOf('req-cancelled').length === 1);
    const [line] = lineOf('req-cancelled');
    // QA: status 0, billed_calls 100.
    expect(line).toMatchObject({
      method: 'bor.BorApi/GetBlockInfoInBatch',
      status: status.CANCELLED,
      account: ACCOUNT,
      calls: 100,
    });
    // The slices in flight when the cancel came (both sent at once), and none after them.
    expect(line!.billed_calls).toBe(SLICES_IN_FLIGHT * ABANDONABLE_SLICE);
    expect(line!.billed_calls).toBeLessThan(100);
    expect(line!.cu).toBe(line!.billed_calls! * CU_PER_CALL);
    // The node saw only the calls sent before the cancel, each of them answered and billed.
    expect(upstream.state.calls - before).toBe(line!.billed_calls);
    billed.calls += line!.billed_calls!;
  });

  it("QA's shape: anvil answering at full speed, each call cancelled within a few ms, as a slice's answer goes back: CANCELLED in the log, no slice sent after the cancel was read", async () => {
    // QA (Medium): 8 sequential batches on a fast anvil, cancel() 2-20 ms in, each with its own
    // x-request-id: every line said status 0 with 100 billed calls. The gateway sent each next
    // slice, and its answer, in the run of callbacks that handled a node answer, before reading
    // the cancel waiting on the client's connection. Here nothing is held: the client cancels
    // as the k-th slice's answer is written back to the gateway (k = 1..5, a few ms in), so
    // the cancel and that answer reach it together; k = 5 is the last answer.
    const asked: { requestId: string; k: number; code: number | undefined; node: number }[] = [];
    for (let i = 0; i < 8; i++) {
      const k = (i % 5) + 1;
      const requestId = `req-qa-${i}`;
      const before = upstream.state.calls;
      upstream.state.answers = 0;
      const code = await new Promise<number | undefined>((resolve) => {
        const call = client['GetBlockInfoInBatch']!(
          { startBlockNumber: 1 + i * 100, endBlockNumber: 100 + i * 100 },
          metadata(requestId),
          (e) => resolve(e?.code ?? status.OK),
        ) as unknown as { cancel(): void };
        upstream.state.answered = (answers) => {
          if (answers === k) call.cancel();
        };
      });
      upstream.state.answered = undefined;
      await until(() => lineOf(requestId).length === 1);
      asked.push({ requestId, k, code, node: upstream.state.calls - before });
    }
    // Every call's billing first, so the usage case below counts them whatever fails here.
    for (const { requestId } of asked) billed.calls += lineOf(requestId)[0]!.billed_calls!;
    // Cancelled early (k = 1, 2: at most 60 and 80 calls sent of 100): the cancel read before the
    // next slices went. The client's cancel leaves this test process, which on a machine loaded
    // past CI's may send it a slice or two late (a practice CI: 80 at k = 1), so half of these
    // four calls must be within the bound; the code before the fix sent all 100 in each. The
    // unit tests (upstream-router, bor-grpc.server) hold the exact rule.
    const early = asked.filter(({ k }) => k <= 2);
    const withinBound = early.filter(
      ({ requestId, k }) => lineOf(requestId)[0]!.billed_calls! <= (k + 2) * ABANDONABLE_SLICE,
    );
    expect(early).toHaveLength(4);
    expect(withinBound.length).toBeGreaterThanOrEqual(2);
    for (const { requestId, k, code, node } of asked) {
      const line = lineOf(requestId)[0]!;
      // The client cancelled before it had the answer; so does the line say, whenever the cancel
      // reached the gateway before its answer left. With the last slice's answer (k = 5) the two
      // cross on the wire: the gateway may have answered, all 100 calls sent, before reading it.
      expect([requestId, code]).toEqual([requestId, status.CANCELLED]);
      if (line.billed_calls !== 100)
        expect([requestId, k, line.status]).toEqual([requestId, k, status.CANCELLED]);
      expect(line).toMatchObject({ calls: 100, cu: line.billed_calls! * CU_PER_CALL });
      // Billed exactly what the node was sent, no more and no less.
      expect(node).toBe(line.billed_calls);
    }
  });

  it("the account's usage, flushed at SIGTERM, is the calls the node answered", async () => {
    // A graceful stop: the usage flushed, then the process ends (by the signal, re-raised).
    gateway.app.kill('SIGTERM');
    await gateway.app.exited();
    const nc = await connect({ servers: namespace.url });
    const consumer = await jetstream(nc).consumers.get(`${namespace.prefix}_BILLING`);
    let cu = 0;
    const messages = await consumer.fetch({ max_messages: 1_000, expires: 1_000 });
    for await (const m of messages)
      for (const account of unpackAccounts(m.json<UsageFlushedV2>()))
        if (account.accountId === ACCOUNT) cu += account.totalCu;
    await nc.close();
    expect(billed.calls).toBeLessThan(1_000);
    expect(cu).toBe(billed.calls * CU_PER_CALL);
  });
});

async function until(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

import { join } from 'node:path';
import {
  credentials,
  loadPackageDefinition,
  Metadata,
  type ClientUnaryCall,
  type ServiceError,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { cuForCall } from '@meridian/compute-units';
import { NETWORKS } from '@meridian/networks';
import { UsageMeter } from '@meridian/platform-messaging';
import type { RunningGrpcServer } from '@meridian/platform-grpc';
import pino from 'pino';
import { Registry } from 'prom-client';
import { LruCache } from '../cache/lru-cache';
import type { ResolvedToken } from '../credentials/credential-cache';
import type { CredentialService } from '../credentials/credential.service';
import { SpendEstimate } from '../credentials/spend-estimate';
import { RateLimiter } from '../limits/token-bucket';
import { GatewayMetrics } from '../observability/gateway-metrics';
import { RequestLog } from '../observability/request-log';
import { CALL_ABANDONED } from '../relay/gateway-errors';
import { RelayService } from '../relay/relay.service';
import type { CallAnswer, OutCall, UpstreamRouter } from '../upstreams/upstream-router';
import { BorApiService } from './bor-api.service';
import { startBorGrpc } from './bor-grpc.server';

type Callback = (error: ServiceError | null, answer: unknown) => void;
type BorApiClient = {
  GetBlockInfoInBatch(request: object, metadata: Metadata, done: Callback): ClientUnaryCall;
  GetAuthor(request: object, metadata: Metadata, done: Callback): void;
  close(): void;
};

const token: ResolvedToken = { tokenId: 't1', accountId: 'acct-grpc', network: 'polygon-mainnet' };
const block = '{"number":"0x1","hash":"0x01","miner":"0x0000000000000000000000000000000000000001"}';

/**
 * QA NN: BorApi calls were billed and counted but left no log line (HTTP logs "rpc request",
 * WebSocket "rpc ws message"). Each gRPC call now writes one line of the request log's shape
 * (request-log.ts), under REQUEST_LOGS: the real gRPC server and relay, the node a function.
 */
describe('BorApi gRPC: one request log line per call', () => {
  const lines: Record<string, unknown>[] = [];
  let server: RunningGrpcServer;
  let client: BorApiClient;
  let requestLog: RequestLog;
  let held: { reached(): void; released: Promise<void> } | undefined;
  const seenSignals: (boolean | undefined)[] = [];
  /** Called as the node is asked (a test's cancel at that moment), then cleared. */
  let onSend: (() => void) | undefined;

  beforeAll(async () => {
    const estimate = new SpendEstimate();
    estimate.reset(1, 1_000_000);
    const lookups = {
      estimate: () => estimate,
      account: () => ({ accountId: 'acct-grpc', status: 'ok', nodeRps: 1_000, version: 1 }),
      ranOut: () => undefined,
      lookup: (t: string) => (t === 'tok' ? { found: true, token } : { found: false }),
    } as unknown as CredentialService;
    const router = {
      pool: () => undefined,
      send: async (
        _n: string,
        _a: string,
        calls: readonly OutCall[],
        _b: unknown,
        abandoned?: AbortSignal,
      ) => {
        onSend?.();
        onSend = undefined;
        // A node that holds the calls until the test lets it answer (`held`), then answers as
        // the router does for an abandoned request: nothing for the calls not sent.
        if (held !== undefined) {
          held.reached();
          await held.released;
          seenSignals.push(abandoned?.aborted);
        }
        if (abandoned?.aborted === true)
          return calls.map((): CallAnswer => ({ kind: 'gateway_error', error: CALL_ABANDONED }));
        return calls.map((call): CallAnswer =>
          call.method === 'bor_getAuthor'
            ? { kind: 'node_error', error: { code: -32601, message: 'no such method' } }
            : { kind: 'result', resultText: block },
        );
      },
    } as unknown as UpstreamRouter;
    const metrics = new GatewayMetrics(new Registry());
    const relay = new RelayService(
      { endpoint: 'eu', maxBatch: 1000, maxLogsBlockRange: 10_000, maxResponseBytes: 1 << 20 },
      lookups,
      router,
      new LruCache<string>(0),
      new RateLimiter(() => 0),
      new UsageMeter(),
      metrics,
    );
    const base = pino({ name: 'rpc-gateway', base: { service: 'rpc-gateway' }, level: 'info' });
    requestLog = new RequestLog(
      base,
      true,
      {
        write: (chunk: string) =>
          lines.push(
            ...chunk
              .trim()
              .split('\n')
              .map((l) => JSON.parse(l) as Record<string, unknown>),
          ),
      },
      'eu',
    );
    server = await startBorGrpc(new BorApiService(relay, metrics), {
      host: '127.0.0.1',
      port: 0,
      logger: pino({ level: 'silent' }),
      requestLog,
    });
    const definition = loadSync(join(__dirname, '../../../../proto/bor/v1/bor.proto'), {
      includeDirs: [join(__dirname, '../../../../proto')],
      longs: String,
      keepCase: true,
      defaults: true,
    });
    const proto = loadPackageDefinition(definition) as unknown as {
      bor: { BorApi: new (address: string, creds: unknown) => BorApiClient };
    };
    client = new proto.bor.BorApi(`127.0.0.1:${server.port}`, credentials.createInsecure());
  });

  afterAll(async () => {
    client?.close();
    await server?.close();
  });

  const ask = (method: 'GetBlockInfoInBatch' | 'GetAuthor', request: object, tok?: string) => {
    const metadata = new Metadata();
    if (tok !== undefined) metadata.set('x-access-token', tok);
    metadata.set('x-request-id', `req-${method}-${tok ?? 'none'}`);
    return new Promise<ServiceError | null>((resolve) =>
      client[method](request, metadata, (error) => resolve(error)),
    );
  };
  const lineOf = (requestId: string) => {
    requestLog.flush();
    return lines.find((line) => line['request_id'] === requestId);
  };

  it('a batch of 3 blocks: the method, OK, its calls, billed calls and CU, account, network, region', async () => {
    expect(
      await ask('GetBlockInfoInBatch', { startBlockNumber: 1, endBlockNumber: 3 }, 'tok'),
    ).toBe(null);
    expect(lineOf('req-GetBlockInfoInBatch-tok')).toEqual(
      expect.objectContaining({
        msg: 'rpc grpc call',
        service: 'rpc-gateway',
        region: 'eu',
        method: 'bor.BorApi/GetBlockInfoInBatch',
        status: 0,
        network: 'polygon-mainnet',
        account: 'acct-grpc',
        calls: 3,
        billed_calls: 3,
        cu: 3 * cuForCall(NETWORKS['polygon-mainnet'], 'eth_getBlockByNumber'),
        ms: expect.any(Number),
      }),
    );
  });

  it('GetAuthor on a non-Bor node: two calls asked, the -32601 one not billed', async () => {
    expect(await ask('GetAuthor', { number: 'latest' }, 'tok')).toBe(null);
    expect(lineOf('req-GetAuthor-tok')).toEqual(
      expect.objectContaining({ method: 'bor.BorApi/GetAuthor', calls: 2, billed_calls: 1 }),
    );
  });

  it('an unknown token: UNAUTHENTICATED (16), no account or network, nothing asked', async () => {
    const error = await ask('GetAuthor', { number: 'latest' }, 'nope');
    expect(error?.code).toBe(16);
    const line = lineOf('req-GetAuthor-nope');
    expect(line).toEqual(
      expect.objectContaining({ status: 16, calls: 0, billed_calls: 0, cu: 0, region: 'eu' }),
    );
    expect(line).not.toHaveProperty('account');
    expect(line).not.toHaveProperty('network');
  });

  it('a batch its client cancels while the node works: CANCELLED (1) in the log, never OK; the relay told to send no more', async () => {
    // QA (Low): 8 of 30 cancelled batches logged status 0 with 100 billed calls each.
    let reached!: () => void;
    const atNode = new Promise<void>((resolve) => (reached = resolve));
    let release!: () => void;
    held = { reached, released: new Promise<void>((resolve) => (release = resolve)) };
    const metadata = new Metadata();
    metadata.set('x-access-token', 'tok');
    metadata.set('x-request-id', 'req-cancelled');
    const answered = new Promise<ServiceError | null>((resolve) => {
      const call = client.GetBlockInfoInBatch(
        { startBlockNumber: 1, endBlockNumber: 100 },
        metadata,
        (error) => resolve(error),
      );
      void atNode.then(() => call.cancel());
    });
    expect((await answered)?.code).toBe(1);
    // A later call on the same connection is answered after the server read the cancel (HTTP/2
    // frames of one connection arrive in order).
    held = undefined;
    expect(await ask('GetAuthor', { number: 'latest' }, 'nope')).toMatchObject({ code: 16 });
    release();
    await until(() => lineOf('req-cancelled') !== undefined);
    expect(seenSignals).toEqual([true]);
    expect(lineOf('req-cancelled')).toEqual(
      expect.objectContaining({
        method: 'bor.BorApi/GetBlockInfoInBatch',
        status: 1,
        account: 'acct-grpc',
        calls: 100,
        billed_calls: 0,
        cu: 0,
      }),
    );
    expect(lines.filter((line) => line['request_id'] === 'req-cancelled')).toHaveLength(1);
  });

  it('a cancel that arrives while the last answers are handled is read before answering: CANCELLED (1), not OK', async () => {
    // QA (Medium): a fast node answered every slice; the method's answer followed the last one
    // in the same run of callbacks, before the cancel waiting on the connection was read, and
    // the line said 0 (OK) though the client had cancelled ~13 ms before.
    const metadata = new Metadata();
    metadata.set('x-access-token', 'tok');
    metadata.set('x-request-id', 'req-cancel-at-answer');
    const answered = new Promise<ServiceError | null>((resolve) => {
      const call = client.GetBlockInfoInBatch(
        { startBlockNumber: 1, endBlockNumber: 3 },
        metadata,
        (error) => resolve(error),
      );
      // The node answers at once; the client's cancel is on the wire meanwhile.
      onSend = () => call.cancel();
    });
    expect((await answered)?.code).toBe(1);
    await until(() => lineOf('req-cancel-at-answer') !== undefined);
    expect(lineOf('req-cancel-at-answer')).toEqual(
      expect.objectContaining({ status: 1, calls: 3, billed_calls: 3 }),
    );
  });

  it("the plan's rate spent: RESOURCE_EXHAUSTED in HTTP's words, with the wait in the retry-after-ms trailer", async () => {
    // QA (Low): HTTP answers Retry-After and data.retryAfterMs; gRPC only error-retryable.
    // The bucket (1,000 RPS, its clock stopped) empties after 10 batches of 100 calls.
    let refused: ServiceError | null = null;
    for (let i = 0; i < 20 && refused === null; i++)
      refused = await ask(
        'GetBlockInfoInBatch',
        { startBlockNumber: 1, endBlockNumber: 100 },
        'tok',
      );
    expect(refused).toMatchObject({
      code: 8,
      details: "rate limit exceeded: the plan's rate limit of 1000 requests per second",
    });
    expect(refused!.metadata.get('error-code')).toEqual(['rate_limited']);
    expect(refused!.metadata.get('error-retryable')).toEqual(['true']);
    // The wait until the tokens missing come back at 1,000 a second: at most 100 ms here.
    const [wait] = refused!.metadata.get('retry-after-ms');
    expect(String(wait)).toMatch(/^[1-9][0-9]*$/);
    expect(Number(wait)).toBeLessThanOrEqual(100);
  });
});

/** Polls `check` on the event loop until it holds (the server's outcome comes a few turns on). */
async function until(check: () => boolean): Promise<void> {
  for (let turn = 0; turn < 1_000 && !check(); turn++)
    await new Promise((resolve) => setImmediate(resolve));
  expect(check()).toBe(true);
}

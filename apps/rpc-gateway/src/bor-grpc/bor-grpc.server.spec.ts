import { join } from 'node:path';
import { credentials, loadPackageDefinition, Metadata, type ServiceError } from '@grpc/grpc-js';
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
import { RelayService } from '../relay/relay.service';
import type { CallAnswer, OutCall, UpstreamRouter } from '../upstreams/upstream-router';
import { BorApiService } from './bor-api.service';
import { startBorGrpc } from './bor-grpc.server';

type Callback = (error: ServiceError | null, answer: unknown) => void;
type BorApiClient = {
  GetBlockInfoInBatch(request: object, metadata: Metadata, done: Callback): void;
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
      send: (_n: string, _a: string, calls: readonly OutCall[]) =>
        Promise.resolve(
          calls.map((call): CallAnswer =>
            call.method === 'bor_getAuthor'
              ? { kind: 'node_error', error: { code: -32601, message: 'no such method' } }
              : { kind: 'result', resultText: block },
          ),
        ),
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
});

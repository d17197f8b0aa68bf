import 'reflect-metadata';
import {
  credentials,
  loadPackageDefinition,
  type Metadata,
  type ServiceError,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { parseConfig } from '@meridian/platform-config';
import { provisionMessaging } from '@meridian/platform-messaging';
import {
  deleteNatsNamespace,
  startBillingLedgerProcess,
  testNatsUrl,
  uniqueNatsPrefix,
  type BillingLedgerProcess,
} from '@meridian/testing';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import pino from 'pino';
import { configSchema, type AppConfig } from '../src/config/config';
import { createGatewayApp, type GatewayApp } from '../src/gateway-app';

export interface RunningGateway extends GatewayApp {
  url: string;
  port: number;
  grpcPort: number;
  config: AppConfig;
  stop(): Promise<void>;
}

export async function provisionNamespace(): Promise<{
  url: string;
  prefix: string;
  cleanup(): Promise<void>;
}> {
  const url = testNatsUrl();
  const prefix = uniqueNatsPrefix();
  const nc = await connect({ servers: url });
  await provisionMessaging(await jetstreamManager(nc), prefix);
  await nc.close();
  return { url, prefix, cleanup: () => deleteNatsNamespace(url, prefix).then(() => undefined) };
}

/**
 * The REAL billing-ledger as a child process (none of its code imported) on the test's
 * database (migrated here, left to the test) and NATS namespace, for gateway tests that need
 * its credentials, revocations and usage. A slow start is a busy machine, not a failure: only a
 * process that exits fails before `startTimeoutMs`.
 */
export function startBillingLedger(options: {
  databaseUrl: string;
  nats: { url: string; prefix: string };
  operatorToken: string;
  startTimeoutMs: number;
}): Promise<BillingLedgerProcess> {
  return startBillingLedgerProcess({
    databaseUrl: options.databaseUrl,
    natsPrefix: options.nats.prefix,
    operatorToken: options.operatorToken,
    env: { NATS_URL: options.nats.url, LOG_LEVEL: 'warn' },
    startTimeoutMs: options.startTimeoutMs,
  });
}

/** Boots the gateway in-process (Nest + fastify) on a free port with the given env. */
/**
 * The gateway in this process. `logLines`, when given, receives every log line it writes (at
 * LOG_LEVEL, warn unless set), as JSON text, instead of stdout.
 */
export async function startGateway(
  env: Record<string, string>,
  port = 0,
  logLines?: string[],
): Promise<RunningGateway> {
  const config = parseConfig(configSchema, {
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: String(port),
    GRPC_PORT: '0',
    LOG_LEVEL: 'warn',
    REQUEST_LOGS: 'false',
    HEALTH_INTERVAL_MS: '300',
    ...env,
  });
  const logger = logLines
    ? pino({ level: config.LOG_LEVEL }, { write: (line: string) => void logLines.push(line) })
    : pino({ level: config.LOG_LEVEL });
  const gateway = await createGatewayApp(config, logger);
  await gateway.app.listen(config.HTTP_PORT, '127.0.0.1');
  const address = gateway.app.getHttpServer().address() as { port: number };
  await gateway.runtime.healthCheckNow();
  return {
    ...gateway,
    config,
    port: address.port,
    url: `http://127.0.0.1:${address.port}`,
    grpcPort: gateway.runtime.grpcPort ?? 0,
    stop: () => gateway.app.close(),
  };
}

export async function rpc(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; text: string; json: unknown }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

export async function metricValue(
  url: string,
  name: string,
  labels: Record<string, string>,
): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (want.every((w) => line.includes(w))) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

/** A plain @grpc/grpc-js client of network P's BorApi, built from the proto as a customer would. */
export type BorApiClient = Record<
  string,
  {
    (req: unknown, md: Metadata, cb: BorApiCallback): void;
    (req: unknown, md: Metadata, options: { deadline?: number }, cb: BorApiCallback): void;
  }
> & { close(): void };
type BorApiCallback = (e: ServiceError | null, r: unknown) => void;

/** The BorApi client class of `proto/bor/v1/bor.proto`, the proto read at each call. */
export function borApiClientClass(): new (
  address: string,
  creds: ReturnType<typeof credentials.createInsecure>,
) => BorApiClient {
  const definition = loadSync(join(__dirname, '../../../proto/bor/v1/bor.proto'), {
    includeDirs: [join(__dirname, '../../../proto')],
    longs: String,
    keepCase: true,
    defaults: true,
  });
  const proto = loadPackageDefinition(definition) as unknown as {
    bor: { BorApi: ReturnType<typeof borApiClientClass> };
  };
  return proto.bor.BorApi;
}

/** A redis-server of the test's own on `port` (so a test may kill it), no persistence. */
export function startRedis(port: number): Promise<ChildProcess> {
  const redis = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return new Promise((resolve, reject) => {
    redis.once('exit', (code) => reject(new Error(`redis-server exited (${code})`)));
    createInterface({ input: redis.stdout! }).on('line', (line) => {
      if (line.includes('Ready to accept connections')) resolve(redis);
    });
  });
}

import { deployedNodeOptions } from '@meridian/testing';

/** The gateway's NODE_OPTIONS as deploy/base/rpc-gateway/deployment.yaml runs it. */
export const GATEWAY_NODE_OPTIONS = deployedNodeOptions('rpc-gateway') ?? '';

/** A static access token of the benches: its account, network, and a plan RPS above any load. */
export interface BenchToken {
  token: string;
  accountId: string;
  network: string;
}

/**
 * The environment of `apps/rpc-gateway/src/main.ts` as the benches run it: as deployed (workers
 * `auto`, production logging with one info line per request, auth, metering and rate limiting
 * on with the plan RPS set above the load), on loopback, with static tokens instead of
 * billing-ledger. One place for bench/gateway, bench/gateway-ab and the gateway soak.
 */
export function deployedGatewayEnv(options: {
  port: number;
  grpcPort: number;
  natsUrl: string;
  natsPrefix: string;
  upstreams: Record<string, unknown[]>;
  tokens: readonly BenchToken[];
}): Record<string, string> {
  return {
    REGION: 'eu',
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: String(options.port),
    GRPC_PORT: String(options.grpcPort),
    LOG_LEVEL: 'info',
    REQUEST_LOGS: 'true',
    NATS_URL: options.natsUrl,
    NATS_PREFIX: options.natsPrefix,
    UPSTREAMS: JSON.stringify(options.upstreams),
    STATIC_ACCESS_TOKENS: JSON.stringify(
      Object.fromEntries(
        options.tokens.map((t) => [
          t.token,
          { accountId: t.accountId, network: t.network, planId: 'enterprise', nodeRps: 10_000_000 },
        ]),
      ),
    ),
    GATEWAY_WORKERS: 'auto',
    NODE_OPTIONS: GATEWAY_NODE_OPTIONS,
  };
}

/** The requests the gateway benches send: one call, a batch of ten, and a cacheable call. */
export const BENCH_REQUESTS = {
  single: '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}',
  batch: JSON.stringify(
    Array.from({ length: 10 }, (_, i) => ({
      jsonrpc: '2.0',
      id: i + 1,
      method: 'eth_blockNumber',
      params: [],
    })),
  ),
  cacheHit: `{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByHash","params":["0x${'11'.repeat(32)}",false]}`,
} as const;

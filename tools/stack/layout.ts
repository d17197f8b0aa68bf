import { join, resolve } from 'node:path';
import { ENDPOINTS } from '@meridian/networks';
import { dashboardEnv, dashboardOperatorEmail } from './dashboard';
import { exportedSecrets, type StackSecrets } from './secrets';

/** Where everything of the local stack lives and listens. Overridable by env for tests. */
export interface StackLayout {
  root: string;
  dir: string;
  host: string;
  postgresPort: number;
  natsPort: number;
  natsPrefix: string;
  redisPort: number;
  databaseUrl?: string;
  natsUrl?: string;
  redisUrl?: string;
  /**
   * The user's UPSTREAMS (JSON, network key → node URLs): those networks go to the given nodes
   * instead of a devnet (tools/stack/upstreams.ts). Unset: every network on its devnet.
   */
  upstreams?: string | undefined;
  devnets: Array<{
    network: string;
    chainId: number;
    port: number;
    /** anvil `--state-interval`: dump the state this often, not only on exit. */
    stateIntervalSeconds?: number | undefined;
  }>;
  /** Where fake-sui-upstream listens when SUI_UPSTREAM_URLS is unset (network S). */
  fakeSuiPort: number;
  apps: AppProcess[];
  /**
   * Secrets exported before `npm start` (WEBHOOK_SECRETS_KEY, DASHBOARD_SECRETS_KEY,
   * DASHBOARD_OPERATOR_PASSWORD, FILTER_ID_KEY): they win over the stack's stored ones
   * (tools/stack/secrets.ts), which the stack passes to the apps otherwise.
   */
  exportedSecrets: Partial<StackSecrets>;
}

export interface AppProcess {
  /** Process name, also the key in endpoints.json `apps`. */
  name: string;
  app: string;
  httpPort: number;
  grpcPort?: number;
  env: Record<string, string>;
}

export function stackLayout(env: NodeJS.ProcessEnv = process.env): StackLayout {
  const root = resolve(__dirname, '../..');
  const base = Number(env['STACK_PORT_BASE'] ?? 7100);
  const port = (offset: number) => base + offset;
  const dir = resolve(env['STACK_DIR'] ?? join(root, '.stack'));
  const apps: AppProcess[] = [
    {
      name: 'billing-ledger',
      app: 'billing-ledger',
      httpPort: port(1),
      grpcPort: port(51),
      // The demo's users top up and change plans themselves (a deployment lets only the
      // operator, or its payment integration, do that: apps/billing-ledger README).
      env: { SELF_SERVICE_BILLING: 'true' },
    },
    ...ENDPOINTS.map((region, index): AppProcess => ({
      name: `rpc-gateway-${region}`,
      app: 'rpc-gateway',
      httpPort: port(10 + index),
      grpcPort: region === 'shared' ? undefined : port(60 + index),
      // BorApi is network P's, which the shared endpoint (network S) does not serve: without
      // this it would listen on the default gRPC port, 9090, beside any other stack's.
      env: { REGION: region, GRPC_ENABLED: String(region !== 'shared') },
    })),
    {
      name: 'chain-indexer',
      app: 'chain-indexer',
      httpPort: port(4),
      // The devnets' chains live in this stack's directory, the indexer's window in Postgres,
      // which a reused server keeps: a new .stack (a fresh clone, a deleted directory) brings new
      // chains that share no block with the stored window. The local stack takes the indexer's
      // documented recovery at once (apps/chain-indexer README "Deep reorgs") instead of halting
      // every network until an operator steps in.
      env: { DEEP_REORG_POLICY: 'resync' },
    },
    {
      name: 'webhook-matcher',
      app: 'webhook-matcher',
      httpPort: port(3),
      env: { WEBHOOK_ALLOW_LOOPBACK_TARGETS: 'true' },
    },
    {
      name: 'delivery-worker',
      app: 'delivery-worker',
      httpPort: port(5),
      env: { ALLOW_LOOPBACK_TARGETS: 'true' },
    },
    { name: 'audit-api', app: 'audit-api', httpPort: port(2), env: {} },
  ];
  const host = '127.0.0.1';
  apps.push({
    name: 'dashboard',
    app: 'dashboard',
    httpPort: port(6),
    env: dashboardEnv(apps, host, root, dashboardOperatorEmail(env)),
  });
  return {
    root,
    dir,
    host,
    postgresPort: Number(env['STACK_PG_PORT'] ?? 5432),
    natsPort: Number(env['STACK_NATS_PORT'] ?? 4222),
    natsPrefix: env['NATS_PREFIX'] ?? '',
    redisPort: Number(env['STACK_REDIS_PORT'] ?? 6379),
    databaseUrl: env['DATABASE_URL'],
    natsUrl: env['NATS_URL'],
    redisUrl: env['REDIS_URL'],
    upstreams: env['UPSTREAMS'],
    devnets: [
      { network: 'opbnb-mainnet', chainId: 204, port: port(40) },
      { network: 'polygon-mainnet', chainId: 137, port: port(41) },
      { network: 'eth-mainnet', chainId: 1, port: port(42) },
    ],
    fakeSuiPort: port(43),
    apps,
    exportedSecrets: exportedSecrets(env),
  };
}

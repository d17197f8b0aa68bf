import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { ensureDatabase } from './database';
import { startDevnet } from './devnet';
import type { AppProcess, StackLayout } from './layout';
import { findServerBinary } from './server-binary';
import {
  buildDashboard,
  dashboardBuildNeeded,
  dashboardOperatorEmail,
  viteBuildArgs,
} from './dashboard';
import { messagingAttached } from '@meridian/testing';
import { answers, httpOk, waitFor } from './probe';
import type { ProcessGroup } from './process-group';
import { seedAuditService, seedDemo, type DemoCredentials } from './seed';
import { loadStackSecrets, secretsEnvOf, type StackSecrets } from './secrets';
import { mergeUpstreams, parseGivenUpstreams, upstreamsAt } from './upstreams';
import {
  auditChainForNetwork,
  ENDPOINTS,
  networksAt,
  REGIONS,
  type Endpoint,
  type NetworkKey,
} from '@meridian/networks';

export type StackEndpoints = ReturnType<typeof endpointsOf>;

/**
 * Brings up everything `layout` names, children in `group`: Postgres, NATS and Redis (reused where
 * they answer, else embedded; without redis-server the gateways keep plan RPS per replica), the devnets, migrations, streams, every app (billing-ledger first),
 * the demo and audit service accounts; writes <dir>/endpoints.json and returns it. The caller
 * owns `group` and stops it. An exported UPSTREAMS (`layout.upstreams`) replaces the devnets for
 * the network keys it names (mergeUpstreams).
 */
export async function startStack(
  layout: StackLayout,
  group: ProcessGroup,
  log: (line: string) => void,
): Promise<StackEndpoints> {
  mkdirSync(layout.dir, { recursive: true });
  const given = parseGivenUpstreams(layout.upstreams);
  // The servers and devnets need nothing of each other: started side by side, so the stack
  // waits for the slowest of them (an embedded PostgreSQL's initdb) rather than their sum.
  const [{ databaseUrl, secrets }, natsUrl, redisUrl, devnets, suiUpstream] = await Promise.all([
    ensurePostgres(layout, group, log).then(async (databaseUrl) => ({
      databaseUrl,
      // Before the migrations: a database that already holds sealed data keeps its legacy keys.
      secrets: await stackSecrets(layout, databaseUrl, log),
    })),
    ensureNats(layout, group, log),
    ensureRedis(layout, group, log),
    Promise.all(
      layout.devnets
        .filter((devnet) => !(devnet.network in given))
        .map((devnet) => startDevnet(group, layout, devnet)),
    ),
    ensureSuiUpstream(layout, group, log, 'sui-mainnet' in given),
  ]);
  const { upstreams, networks } = mergeUpstreams(devnets, given);
  if (Object.keys(given).length > 0)
    log(
      `UPSTREAMS: your nodes for ${Object.keys(given).join(', ')}; devnets for ${
        devnets.map((devnet) => devnet.network).join(', ') || 'none'
      }`,
    );
  const node = (script: string) => ['-r', '@swc-node/register', join(layout.root, script)];
  const runOnce = async (name: string, script: string, env: Record<string, string>) => {
    const code = await group.run(name, process.execPath, node(script), {
      cwd: layout.root,
      env: { ...process.env, ...env },
    });
    if (code !== 0) throw new Error(`${name} failed (exit code ${code})`);
  };

  // The database's steps and the streams' provisioning touch different servers: side by side.
  await Promise.all([
    (async () => {
      await runOnce('migrate', 'tools/db/migrate-all.ts', { DATABASE_URL: databaseUrl });
      await runOnce('labels', 'apps/audit-api/src/labels/load-labels.ts', {
        DATABASE_URL: databaseUrl,
      });
    })(),
    existsSync(join(layout.root, 'tools/messaging/provision.ts'))
      ? runOnce('provision', 'tools/messaging/provision.ts', {
          NATS_URL: natsUrl,
          NATS_PREFIX: layout.natsPrefix,
        })
      : undefined,
  ]);

  const billing = layout.apps.find((app) => app.app === 'billing-ledger')!;
  const common = {
    LOG_LEVEL: process.env['LOG_LEVEL'] ?? 'info',
    // The checkout's commit, as the image build passes it (deploy/README): on every app's
    // /healthz, /metrics (meridian_build_info) and start line.
    MERIDIAN_COMMIT: process.env['MERIDIAN_COMMIT'] ?? checkoutCommit(layout.root),
    HTTP_HOST: layout.host,
    DATABASE_URL: databaseUrl,
    NATS_URL: natsUrl,
    NATS_PREFIX: layout.natsPrefix,
    BILLING_GRPC_URL: `${layout.host}:${billing.grpcPort}`,
    OPERATOR_TOKEN: secrets.operator_token,
    UPSTREAMS: JSON.stringify(upstreams),
    SUI_UPSTREAM_URLS: suiUpstream.urls,
    NETWORKS: networks.join(','),
    // Plan RPS shared by the three regions' gateways (ADR 0102); keys apart per stack.
    ...(redisUrl
      ? {
          RATE_LIMIT_REDIS_URL: redisUrl,
          RATE_LIMIT_KEY_PREFIX: `meridian:rps:${layout.natsPrefix || 'stack'}:`,
        }
      : {}),
  };
  const startApp = (app: AppProcess, extra: Record<string, string> = {}) => {
    const env: Record<string, string> = {
      ...common,
      ...secretsEnvOf(app.app, secrets),
      ...(app.app === 'rpc-gateway' ? gatewayUpstreams(app, upstreams, suiUpstream.urls) : {}),
      ...extra,
      ...app.env,
      HTTP_PORT: String(app.httpPort),
    };
    if (app.grpcPort) env['GRPC_PORT'] = String(app.grpcPort);
    // An app that dies is started again with backoff, as Kubernetes restarts a pod; its death
    // is still reported (the fuzz suite counts every one as a failure).
    group.start(
      app.name,
      process.execPath,
      node(`apps/${app.app}/src/main.ts`),
      { cwd: layout.root, env: { ...process.env, ...env } },
      { restart: true },
    );
    // Ready (serving) and working: its consumers attached and KV mirrors loaded, which /readyz
    // does not say (NATS is not part of readiness, ADR 0212).
    const base = `http://${layout.host}:${app.httpPort}`;
    return waitFor(
      `${app.name} /readyz and its NATS consumers`,
      async () => (await httpOk(`${base}/readyz`)) && (await messagingAttached(base)),
      // Generous: on a busy 2-core machine, nine apps compiling at once took over two minutes.
      300_000,
    );
  };

  // The dashboard's page, built by vite when missing or older than its sources.
  if (layout.apps.some((app) => app.app === 'dashboard') && dashboardBuildNeeded(layout.root)) {
    const code = await buildDashboard(layout.root, () =>
      group.run('vite', process.execPath, viteBuildArgs(layout.root), {
        cwd: layout.root,
        env: process.env,
      }),
    );
    if (code !== 0) throw new Error(`vite build of the dashboard failed (exit code ${code})`);
  }

  // billing-ledger first: the other apps' credentials (and audit-api's own access tokens) come from it.
  await startApp(billing);
  const demo = await seedDemo(layout, secrets.operator_token);
  // A layout may hold a subset of the apps (a test's private stack): audit-api's service
  // account and chain URLs only when it runs.
  const auditEnv = layout.apps.some((app) => app.app === 'audit-api')
    ? await auditApiEnv(layout, secrets.operator_token, layout.devnets)
    : {};
  await Promise.all(
    layout.apps
      .filter((app) => app !== billing)
      .map((app) => startApp(app, app.app === 'audit-api' ? auditEnv : {})),
  );

  const endpoints = endpointsOf(layout, devnets, suiUpstream.fake, demo, secrets);
  writeFileSync(join(layout.dir, 'endpoints.json'), `${JSON.stringify(endpoints, null, 2)}\n`);
  return endpoints;
}

/**
 * Network S's upstream for the shared endpoint: SUI_UPSTREAM_URLS when set (or nothing more when
 * the user's UPSTREAMS names sui-mainnet, `inUpstreams`: the gateway reads both); otherwise, when
 * the layout runs the shared gateway, fake-sui-upstream (recorded responses; there is no S node to
 * run here), so S calls answer and are billed like any other instead of -32000 for every call.
 */
async function ensureSuiUpstream(
  layout: StackLayout,
  group: ProcessGroup,
  log: (line: string) => void,
  inUpstreams: boolean,
): Promise<{ urls: string; fake?: string }> {
  const given = process.env['SUI_UPSTREAM_URLS'];
  if (given || inUpstreams) return { urls: given ?? '' };
  if (!layout.apps.some((app) => app.name === 'rpc-gateway-shared')) return { urls: '' };
  if (await answers(layout.host, layout.fakeSuiPort))
    throw new Error(`port ${layout.fakeSuiPort} for fake-sui-upstream is taken`);
  group.start(
    'fake-sui-upstream',
    process.execPath,
    [
      '-r',
      '@swc-node/register',
      join(layout.root, 'tools/stack/fake-sui-upstream.ts'),
      layout.host,
      String(layout.fakeSuiPort),
    ],
    { cwd: layout.root, env: process.env },
    { restart: true },
  );
  await waitFor('fake-sui-upstream', () => answers(layout.host, layout.fakeSuiPort), 60_000);
  const url = `http://${layout.host}:${layout.fakeSuiPort}`;
  log(`network S: no SUI_UPSTREAM_URLS, the shared endpoint relays to fake-sui-upstream at ${url}`);
  return { urls: url, fake: url };
}

/**
 * audit-api's chain reads go through the EU gateway with the audit service account's tokens, for
 * every devnet network of the layout (the gateway relays to the user's nodes where UPSTREAMS
 * replaced a devnet).
 */
async function auditApiEnv(
  layout: StackLayout,
  operatorToken: string,
  devnets: Array<{ network: string }>,
): Promise<Record<string, string>> {
  const gatewayEu = layout.apps.find((app) => app.name === 'rpc-gateway-eu');
  if (!gatewayEu) throw new Error('audit-api needs rpc-gateway-eu in the layout');
  const auditService = await seedAuditService(
    layout,
    operatorToken,
    devnets.map((devnet) => devnet.network),
  );
  const auditRpcUrls = Object.fromEntries(
    devnets.map((devnet) => [
      auditChainForNetwork(devnet.network as NetworkKey)!.code,
      `http://${layout.host}:${gatewayEu.httpPort}/${auditService.accessTokens[devnet.network]}/`,
    ]),
  );
  return { AUDIT_RPC_URLS: JSON.stringify(auditRpcUrls) };
}

/** Password of the embedded server's `postgres` user; it listens on 127.0.0.1 only. */
const EMBEDDED_PASSWORD = 'meridian-local';

/** The `meridian` database on the embedded server ensurePostgres starts (no DATABASE_URL). */
export function embeddedDatabaseUrl(layout: StackLayout): string {
  return `postgres://postgres:${EMBEDDED_PASSWORD}@${layout.host}:${layout.postgresPort}/meridian`;
}

async function ensurePostgres(
  layout: StackLayout,
  group: ProcessGroup,
  log: (line: string) => void,
): Promise<string> {
  if (layout.databaseUrl) {
    log(`using Postgres at DATABASE_URL`);
    return ensureDatabase(layout.databaseUrl);
  }
  const server = `${layout.host}:${layout.postgresPort}`;
  if (await answers(layout.host, layout.postgresPort)) {
    log(`reusing Postgres at ${server} (database meridian)`);
    return createMeridianDatabase(`postgres://postgres@${server}`);
  }
  // As root the server runs as the `postgres` user (embedded-postgres.ts), which must be able to
  // reach its data directory inside ours.
  if (process.getuid?.() === 0) chmodSync(layout.dir, 0o711);
  group.start(
    'postgres',
    process.execPath,
    [
      '-r',
      '@swc-node/register',
      join(layout.root, 'tools/stack/embedded-postgres.ts'),
      join(layout.dir, 'postgres'),
      String(layout.postgresPort),
      EMBEDDED_PASSWORD,
    ],
    { cwd: layout.root },
  );
  const base = `postgres://postgres:${EMBEDDED_PASSWORD}@${server}`;
  await waitFor('embedded PostgreSQL', () => canQuery(`${base}/postgres`), 120_000, 500);
  return createMeridianDatabase(base);
}

async function canQuery(url: string): Promise<boolean> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Every app keeps its own schema in one database, `meridian`, made on first start. */
const createMeridianDatabase = (serverUrl: string): Promise<string> =>
  ensureDatabase(`${serverUrl}/meridian`);

async function ensureNats(
  layout: StackLayout,
  group: ProcessGroup,
  log: (line: string) => void,
): Promise<string> {
  if (layout.natsUrl) {
    log('using NATS at NATS_URL');
    return layout.natsUrl;
  }
  const url = `nats://${layout.host}:${layout.natsPort}`;
  if (await answers(layout.host, layout.natsPort)) {
    log(`reusing NATS at ${layout.host}:${layout.natsPort}`);
    return url;
  }
  const binary = findServerBinary('nats-server');
  if (!binary) {
    throw new Error(
      'no NATS answers and nats-server is not on PATH: install it (apt-get install nats-server) or set NATS_URL',
    );
  }
  const storeDir = join(layout.dir, 'nats');
  mkdirSync(storeDir, { recursive: true });
  group.start('nats', binary, [
    '-a',
    layout.host,
    '-p',
    String(layout.natsPort),
    '-js',
    '-sd',
    storeDir,
  ]);
  await waitFor('NATS', () => answers(layout.host, layout.natsPort), 30_000);
  return url;
}

/**
 * Redis for the fleet-wide plan-RPS buckets (ADR 0102): REDIS_URL, or one answering on the
 * layout's port, or redis-server from PATH started here (nothing kept on disk: the buckets
 * refill within a second). Without any, each gateway keeps its own buckets (ADR 0204) and the
 * stack says so.
 */
async function ensureRedis(
  layout: StackLayout,
  group: ProcessGroup,
  log: (line: string) => void,
): Promise<string | undefined> {
  if (layout.redisUrl) {
    log('using Redis at REDIS_URL');
    return layout.redisUrl;
  }
  const url = `redis://${layout.host}:${layout.redisPort}`;
  if (await answers(layout.host, layout.redisPort)) {
    log(`reusing Redis at ${layout.host}:${layout.redisPort}`);
    return url;
  }
  const binary = findServerBinary('redis-server');
  if (!binary) {
    log(
      'no Redis answers and redis-server is not on PATH: plan RPS is enforced per gateway, not across regions (apt-get install redis-server, or set REDIS_URL)',
    );
    return undefined;
  }
  group.start('redis', binary, [
    '--bind',
    layout.host,
    '--port',
    String(layout.redisPort),
    '--save',
    '',
    '--appendonly',
    'no',
  ]);
  await waitFor('Redis', () => answers(layout.host, layout.redisPort), 30_000);
  return url;
}

/** The stack's secrets, kept in its database (tools/stack/secrets.ts); says where each came from. */
async function stackSecrets(
  layout: StackLayout,
  databaseUrl: string,
  log: (line: string) => void,
): Promise<StackSecrets> {
  const { values, sources } = await loadStackSecrets(
    databaseUrl,
    layout.dir,
    layout.exportedSecrets,
  );
  const said: Record<string, string[]> = {};
  for (const [name, source] of Object.entries(sources)) (said[source] ??= []).push(name);
  const what = {
    stored: 'stored',
    generated: 'generated and stored',
    legacy: `derived from ${layout.dir} as before the store, and stored`,
    exported: 'exported (not stored)',
  };
  log(
    `secrets in the stack's database (local_stack.secrets): ${Object.entries(said)
      .map(([source, names]) => `${names.join(', ')} ${what[source as keyof typeof what]}`)
      .join('; ')}`,
  );
  return values;
}

/**
 * A gateway's UPSTREAMS and SUI_UPSTREAM_URLS: only the networks its endpoint offers, as each
 * region's deploy/overlays upstreams.json, so it logs no "networks this endpoint does not offer"
 * warning (which a deployment's misplaced node should still raise).
 */
/** The commit checked out at `root` (`git rev-parse HEAD`), or "" outside a git checkout. */
export function checkoutCommit(root: string): string {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return '';
  }
}

function gatewayUpstreams(
  app: AppProcess,
  upstreams: Parameters<typeof upstreamsAt>[1],
  suiUrls: string,
): Record<string, string> {
  const endpoint = app.env['REGION'] as Endpoint;
  const offersSui = networksAt(endpoint).some((network) => network.key === 'sui-mainnet');
  return {
    UPSTREAMS: JSON.stringify(upstreamsAt(endpoint, upstreams)),
    SUI_UPSTREAM_URLS: offersSui ? suiUrls : '',
  };
}

function endpointsOf(
  layout: StackLayout,
  devnets: Array<{ network: string; url: string }>,
  fakeSui: string | undefined,
  demo: DemoCredentials,
  secrets: StackSecrets,
) {
  const http = (app: AppProcess) => `http://${layout.host}:${app.httpPort}`;
  // A layout may hold a subset of the apps (the fuzz suite runs only the public edges).
  const url = (name: string, path: string) => {
    const app = layout.apps.find((candidate) => candidate.name === name);
    return app ? `${http(app)}${path}` : undefined;
  };
  const gateways = (regions: readonly string[], address: (app: AppProcess) => string) =>
    Object.fromEntries(
      regions.flatMap((region) => {
        const app = layout.apps.find((candidate) => candidate.name === `rpc-gateway-${region}`);
        return app ? [[region, address(app)]] : [];
      }),
    );
  return {
    apps: Object.fromEntries(layout.apps.map((app) => [app.name, http(app)])),
    rpc: gateways(ENDPOINTS, (app) => `${http(app)}/`),
    grpc: gateways(REGIONS, (app) => `${layout.host}:${app.grpcPort}`),
    audit: url('audit-api', '/v1'),
    webhooks: url('webhook-matcher', '/api/v1'),
    account: url('billing-ledger', '/api/v1'),
    devnets: Object.fromEntries(devnets.map((devnet) => [devnet.network, devnet.url])),
    /** Stand-ins named as such: recorded responses, not nodes. */
    fakes: fakeSui ? { 'sui-mainnet': fakeSui } : {},
    demo: { ...demo, operatorToken: secrets.operator_token },
    dashboard: dashboardEndpoint(layout, secrets),
  };
}

/** The dashboard's URL and its operator sign-in, when the layout runs it. */
function dashboardEndpoint(layout: StackLayout, secrets: StackSecrets) {
  const app = layout.apps.find((candidate) => candidate.app === 'dashboard');
  if (!app) return undefined;
  return {
    url: `http://${layout.host}:${app.httpPort}`,
    operatorEmail: app.env['OPERATOR_EMAIL'] ?? dashboardOperatorEmail(),
    operatorPassword: app.env['OPERATOR_PASSWORD'] ?? secrets.dashboard_operator_password,
  };
}

export function printSummary(
  endpoints: StackEndpoints,
  layout: StackLayout,
  log: (line: string) => void,
): void {
  const lines = [
    `stack is up. Endpoints (also in ${join(layout.dir, 'endpoints.json')}):`,
    ...Object.entries(endpoints.apps).map(([name, url]) => `  ${name.padEnd(20)} ${url}`),
    ...Object.entries(endpoints.rpc).map(
      ([region, url]) => `  rpc ${region.padEnd(16)} ${url}<ACCESS_TOKEN>/`,
    ),
    ...Object.entries(endpoints.grpc).map(
      ([region, address]) => `  grpc ${region.padEnd(15)} ${address}`,
    ),
    `  audit                ${endpoints.audit}`,
    `  webhooks             ${endpoints.webhooks}`,
    `  account              ${endpoints.account}`,
    ...(endpoints.dashboard
      ? [
          `  dashboard            ${endpoints.dashboard.url}  (operator: ${endpoints.dashboard.operatorEmail} / ${endpoints.dashboard.operatorPassword})`,
        ]
      : []),
    ...Object.entries(endpoints.devnets).map(
      ([network, url]) => `  devnet ${network.padEnd(13)} ${url}`,
    ),
    ...Object.entries(endpoints.fakes).map(
      ([network, url]) => `  fake ${network.padEnd(15)} ${url}  (recorded responses, not a node)`,
    ),
    ...(endpoints.demo.apiKey ? [`  demo API key         ${endpoints.demo.apiKey}`] : []),
    'Ctrl-C stops everything.',
  ];
  for (const line of lines) log(line);
}

import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { startDevnet } from './devnet';
import { stackLayout, type AppProcess, type StackLayout } from './layout';
import { findNatsServer } from './nats-server';
import { answers, httpOk, waitFor } from './probe';
import { ProcessGroup } from './process-group';
import { seedAuditService, seedDemo, type DemoCredentials } from './seed';
import { auditChainForNetwork, ENDPOINTS, REGIONS, type NetworkKey } from '@meridian/networks';

/**
 * `npm start`: the whole system on one machine (ARCHITECTURE "Running it"). Reuses Postgres and
 * NATS where they answer, otherwise starts embedded ones; starts three anvil devnets, applies
 * migrations, provisions streams, starts every app as its own process, seeds a demo account and
 * writes .stack/endpoints.json. Ctrl-C stops every child.
 */
const log = (line: string) => process.stdout.write(`[stack] ${line}\n`);

async function main(): Promise<void> {
  const layout = stackLayout();
  mkdirSync(layout.dir, { recursive: true });
  const group = new ProcessGroup(undefined, (name, code) =>
    log(`${name} exited unexpectedly (code ${code})`),
  );
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: stopping every child…`);
    await group.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));

  try {
    const databaseUrl = await ensurePostgres(layout, group);
    const natsUrl = await ensureNats(layout, group);
    const devnets = await Promise.all(
      layout.devnets.map((devnet) => startDevnet(group, layout, devnet)),
    );
    const upstreams = Object.fromEntries(devnets.map((devnet) => [devnet.network, [devnet.url]]));
    const secrets = loadSecrets(layout);
    const node = (script: string) => ['-r', '@swc-node/register', join(layout.root, script)];
    const runOnce = async (name: string, script: string, env: Record<string, string>) => {
      const code = await group.run(name, process.execPath, node(script), {
        cwd: layout.root,
        env: { ...process.env, ...env },
      });
      if (code !== 0) throw new Error(`${name} failed (exit code ${code})`);
    };

    await runOnce('migrate', 'tools/db/migrate-all.ts', { DATABASE_URL: databaseUrl });
    await runOnce('labels', 'apps/audit-api/src/labels/load-labels.ts', {
      DATABASE_URL: databaseUrl,
    });
    if (existsSync(join(layout.root, 'tools/messaging/provision.ts'))) {
      await runOnce('provision', 'tools/messaging/provision.ts', {
        NATS_URL: natsUrl,
        NATS_PREFIX: layout.natsPrefix,
      });
    }

    const billing = layout.apps.find((app) => app.app === 'billing-ledger')!;
    const gatewayEu = layout.apps.find((app) => app.name === 'rpc-gateway-eu')!;
    const common = {
      LOG_LEVEL: process.env['LOG_LEVEL'] ?? 'info',
      HTTP_HOST: layout.host,
      DATABASE_URL: databaseUrl,
      NATS_URL: natsUrl,
      NATS_PREFIX: layout.natsPrefix,
      BILLING_GRPC_URL: `${layout.host}:${billing.grpcPort}`,
      OPERATOR_TOKEN: secrets.operatorToken,
      UPSTREAMS: JSON.stringify(upstreams),
      SUI_UPSTREAM_URLS: process.env['SUI_UPSTREAM_URLS'] ?? '',
      NETWORKS: devnets.map((devnet) => devnet.network).join(','),
    };
    const startApp = (app: AppProcess, extra: Record<string, string> = {}) => {
      const env: Record<string, string> = {
        ...common,
        ...extra,
        ...app.env,
        HTTP_PORT: String(app.httpPort),
      };
      if (app.grpcPort) env['GRPC_PORT'] = String(app.grpcPort);
      group.start(app.name, process.execPath, node(`apps/${app.app}/src/main.ts`), {
        cwd: layout.root,
        env: { ...process.env, ...env },
      });
      return waitFor(
        `${app.name} /readyz`,
        () => httpOk(`http://${layout.host}:${app.httpPort}/readyz`),
        120_000,
      );
    };

    // billing-ledger first: the other apps' credentials (and audit-api's own access tokens) come from it.
    await startApp(billing);
    const demo = await seedDemo(layout, secrets.operatorToken);
    const auditService = await seedAuditService(
      layout,
      secrets.operatorToken,
      devnets.map((devnet) => devnet.network),
    );
    const auditRpcUrls = Object.fromEntries(
      devnets.map((devnet) => [
        auditChainForNetwork(devnet.network as NetworkKey)!.code,
        `http://${layout.host}:${gatewayEu.httpPort}/${auditService.accessTokens[devnet.network]}/`,
      ]),
    );
    await Promise.all(
      layout.apps
        .filter((app) => app !== billing)
        .map((app) =>
          startApp(
            app,
            app.app === 'audit-api' ? { AUDIT_RPC_URLS: JSON.stringify(auditRpcUrls) } : {},
          ),
        ),
    );

    const endpoints = endpointsOf(layout, devnets, demo, secrets.operatorToken);
    writeFileSync(join(layout.dir, 'endpoints.json'), `${JSON.stringify(endpoints, null, 2)}\n`);
    printSummary(endpoints);
  } catch (error) {
    log(`failed: ${error instanceof Error ? error.message : String(error)}`);
    await group.stop();
    process.exit(1);
  }
}

async function ensurePostgres(layout: StackLayout, group: ProcessGroup): Promise<string> {
  if (layout.databaseUrl) {
    log(`using Postgres at DATABASE_URL`);
    return layout.databaseUrl;
  }
  if (await answers(layout.host, layout.postgresPort)) {
    const url = `postgres://postgres@${layout.host}:${layout.postgresPort}/meridian`;
    const admin = new Client({
      connectionString: `postgres://postgres@${layout.host}:${layout.postgresPort}/postgres`,
    });
    await admin.connect();
    const exists = await admin.query(`SELECT 1 FROM pg_database WHERE datname = 'meridian'`);
    if (exists.rowCount === 0) await admin.query('CREATE DATABASE meridian');
    await admin.end();
    log(`reusing Postgres at ${layout.host}:${layout.postgresPort} (database meridian)`);
    return url;
  }
  const dataDir = join(layout.dir, 'pglite');
  group.start(
    'postgres',
    process.execPath,
    [
      '-r',
      '@swc-node/register',
      join(layout.root, 'tools/stack/pglite-server.ts'),
      dataDir,
      String(layout.postgresPort),
    ],
    {
      cwd: layout.root,
    },
  );
  await waitFor('embedded Postgres', () => answers(layout.host, layout.postgresPort), 60_000);
  return `postgres://postgres@${layout.host}:${layout.postgresPort}/postgres`;
}

async function ensureNats(layout: StackLayout, group: ProcessGroup): Promise<string> {
  if (layout.natsUrl) {
    log('using NATS at NATS_URL');
    return layout.natsUrl;
  }
  const url = `nats://${layout.host}:${layout.natsPort}`;
  if (await answers(layout.host, layout.natsPort)) {
    log(`reusing NATS at ${layout.host}:${layout.natsPort}`);
    return url;
  }
  const binary = findNatsServer();
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

interface Secrets {
  operatorToken: string;
}

/** Generated once per stack directory, so restarts keep working credentials. */
function loadSecrets(layout: StackLayout): Secrets {
  const file = join(layout.dir, 'secrets.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as Secrets;
  const secrets = { operatorToken: `op_${randomBytes(24).toString('hex')}` };
  writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  return secrets;
}

function endpointsOf(
  layout: StackLayout,
  devnets: Array<{ network: string; url: string }>,
  demo: DemoCredentials,
  operatorToken: string,
) {
  const http = (app: AppProcess) => `http://${layout.host}:${app.httpPort}`;
  const byName = (name: string) => layout.apps.find((app) => app.name === name)!;
  return {
    apps: Object.fromEntries(layout.apps.map((app) => [app.name, http(app)])),
    rpc: Object.fromEntries(
      ENDPOINTS.map((region) => [region, `${http(byName(`rpc-gateway-${region}`))}/`]),
    ),
    grpc: Object.fromEntries(
      REGIONS.map((region) => [
        region,
        `${layout.host}:${byName(`rpc-gateway-${region}`).grpcPort}`,
      ]),
    ),
    audit: `${http(byName('audit-api'))}/v1`,
    webhooks: `${http(byName('webhook-matcher'))}/api/v1`,
    account: `${http(byName('billing-ledger'))}/api/v1`,
    devnets: Object.fromEntries(devnets.map((devnet) => [devnet.network, devnet.url])),
    demo: { ...demo, operatorToken },
  };
}

function printSummary(endpoints: ReturnType<typeof endpointsOf>): void {
  const lines = [
    'stack is up. Endpoints (also in .stack/endpoints.json):',
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
    ...Object.entries(endpoints.devnets).map(
      ([network, url]) => `  devnet ${network.padEnd(13)} ${url}`,
    ),
    ...(endpoints.demo.apiKey ? [`  demo API key         ${endpoints.demo.apiKey}`] : []),
    'Ctrl-C stops everything.',
  ];
  for (const line of lines) log(line);
}

void main();
